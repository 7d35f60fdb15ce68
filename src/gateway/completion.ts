/**
 * One chat completion through the router, independent of the client's wire format: resolve the
 * model, check the key's allow-list, order the targets, run the attempt loop against the provider
 * layer, and record usage. Routes render the result; the in-process handle returns it.
 */
import type { ServerResponse } from 'node:http';
import { HttpError } from '../http/errors.js';
import { gatewayHttpError } from './routes/errors.js';
import { GatewayError } from './errors.js';
import { setTelemetryHeaders } from './telemetry.js';
import type { CanonicalRequest, Usage } from './canonical.js';
import { emptyUsage } from './canonical.js';
import type { Principal } from './auth.js';
import { costOf, mediaCostOf, type MediaUsage } from './pricing.js';
import { callUpstream, type UpstreamResult } from './providers/index.js';
import type { CallOptions } from './providers/types.js';
import { featuresOf } from './routing/combo-options.js';
import { accountUsage } from './limits/index.js';
import { AttemptsFailed, runAttempts, type AttemptDeps } from './routing/attempts.js';
import type { AttemptSubject, RequestInfo } from './routing/policy.js';
import { resolveModel, type Resolution, type ResolvedTarget } from './routing/resolve.js';
import { orderTargets } from './routing/strategies.js';
import type { GatewayServices } from './services.js';
import type { AttemptLog, RequestLogEntry } from './request-log/store.js';
import type { AbortLike } from './abort.js';

export interface CompletionInput {
  canonical: CanonicalRequest;
  principal: Principal;
  /** Route family for the request log: chat, messages, responses, gemini, ollama, internal. */
  endpoint: string;
  requestId: string;
  sessionId?: string;
  /** Aborted when the client disconnects. */
  signal: AbortLike;
  /** Provider-scoped route (`/v1/providers/{provider}/…`): the model must belong to it. */
  providerScope?: string;
}

export interface CompletionStarted {
  resolution: Resolution;
  subject: AttemptSubject;
  result: UpstreamResult;
  attempts: AttemptLog[];
  failedAttempts: number;
  startedAt: number;
  /** ms from the start to the upstream response (non-stream) or its first useful event (stream). */
  latencyMs: number;
}

/** Apply a provider-scoped route's prefix: add it when missing, 400 when another provider is named. */
export function scopeModel(model: string, provider: string | undefined): string {
  if (!provider || typeof model !== 'string') return model;
  if (model.startsWith(`${provider}/`)) return model;
  const slash = model.indexOf('/');
  if (slash > 0) {
    throw new GatewayError('invalid', `model ${JSON.stringify(model)} does not belong to provider ${provider} (this route only serves ${provider}/…)`, {
      code: 'model_provider_mismatch',
    });
  }
  return `${provider}/${model}`;
}

/** Resolve and check access (throws 400/403/404/503 before any upstream call). */
/** What resolving a model for a principal reads. */
export type ResolveDeps = Pick<GatewayServices, 'state' | 'auth' | 'policies'>;

export function resolveFor(svc: ResolveDeps, model: string, principal: Principal, providerScope?: string): Resolution {
  const scoped = scopeModel(model, providerScope);
  const resolution = resolveModel(svc.state.catalog, scoped);
  if (providerScope && resolution.targets.some((t) => t.provider.config.id !== providerScope)) {
    throw new GatewayError('invalid', `model ${JSON.stringify(model)} resolves outside provider ${providerScope}`, { code: 'model_provider_mismatch' });
  }
  svc.auth.checkModel(principal, resolution.requested, ...(resolution.combo ? [] : resolution.targets.map((t) => t.ref)));
  if (svc.policies.appliesTo(principal.key?.id)) svc.policies.checkModel(principal.key?.id, resolution.requested, resolution.targets.map((t) => t.ref));
  return resolution;
}

/** The canonical request as one target receives it (upstream model id, reasoning switched off on request). */
function forTarget(req: CanonicalRequest, modelId: string, noThinking: boolean): CanonicalRequest {
  if (!noThinking) return { ...req, model: modelId };
  const out: CanonicalRequest = { ...req, model: modelId, thinking: { enabled: false } };
  if (req.extra) {
    const { reasoning: _r, reasoning_effort: _e, thinking: _t, ...rest } = req.extra;
    out.extra = rest;
  }
  return out;
}

/** What one completion through the attempt loop uses. */
export type CompletionDeps = ResolveDeps & UpstreamDeps & Pick<GatewayServices, 'strategy' | 'policy' | 'metrics' | 'sleep' | 'concurrency' | 'reasoningCache'>;

export async function startCompletion(svc: CompletionDeps, input: CompletionInput, resolved?: Resolution): Promise<CompletionStarted> {
  const startedAt = svc.clock.now();
  const resolution = resolved ?? resolveFor(svc, input.canonical.model, input.principal, input.providerScope);
  const settings = svc.state.catalog.settings;
  const request: RequestInfo = { requestId: input.requestId, sessionId: input.sessionId, apiKeyId: input.principal.key?.id, accountId: input.principal.key?.accountId };
  const ordered = preferPinned(
    svc,
    resolution,
    orderTargets(resolution.strategy, resolution.combo, resolution.targets, svc.strategy, () => featuresOf(input.canonical, request.apiKeyId)),
    request,
  );
  const run = await runAttempts(
    {
      resolution,
      ordered,
      request,
      maxAttempts: resolution.combo?.maxAttempts ?? settings.maxAttempts,
      retryWaitMaxMs: settings.retryWaitMaxMs,
      signal: input.signal,
    },
    attemptDeps(svc),
    (s, signal) =>
      callUpstream(s.provider.conn, { id: s.account.id, apiKey: s.account.apiKey }, forTarget(svc.reasoningCache.restore(input.canonical, s.provider.config.id), s.modelId, resolution.noThinking), {
        ...upstreamOptions(svc, s.provider.config.id, s.account.id),
        signal,
      }),
  );
  // The provider's concurrency slot is held for as long as the upstream call runs.
  if (run.value.stream) void run.value.outcome.finally(run.release);
  else {
    run.release();
    svc.reasoningCache.captureResponse(run.subject.provider.config.id, run.subject.modelId, run.value.response);
  }
  return {
    resolution,
    subject: run.subject,
    result: run.value,
    attempts: run.attempts,
    failedAttempts: run.failedAttempts,
    startedAt,
    latencyMs: svc.clock.now() - startedAt,
  };
}

/** Call options of an upstream call for one provider account: the egress layer, its assigned proxy, the clock. */
/** What an upstream call's options come from. */
export type UpstreamDeps = Pick<GatewayServices, 'egress' | 'proxies' | 'clock'>;

export function upstreamOptions(svc: UpstreamDeps, providerId: string, accountId: string | undefined, signal?: AbortLike): CallOptions {
  return { egress: svc.egress, dispatcher: svc.proxies.dispatcherFor(providerId, accountId), signal, now: () => svc.clock.now() };
}

/** What the attempt loop needs from the services. */
export function attemptDeps(svc: Pick<GatewayServices, 'policy' | 'metrics' | 'clock' | 'sleep' | 'concurrency'>): AttemptDeps {
  return { policy: svc.policy, metrics: svc.metrics, clock: svc.clock, sleep: svc.sleep, slots: svc.concurrency };
}

/** Session affinity across a combo's targets: the target the session is pinned to goes first. */
export function preferPinned(svc: Pick<GatewayServices, 'policy' | 'clock'>, resolution: Resolution, ordered: ResolvedTarget[], request: RequestInfo): ResolvedTarget[] {
  if (!resolution.combo || request.sessionId === undefined || ordered.length < 2 || !svc.policy.preferredTarget) return ordered;
  const ref = svc.policy.preferredTarget(resolution.combo.name, request, svc.clock.now());
  if (ref === undefined || ordered[0]!.ref === ref) return ordered;
  const i = ordered.findIndex((t) => t.ref === ref);
  return i > 0 ? [ordered[i]!, ...ordered.slice(0, i), ...ordered.slice(i + 1)] : ordered;
}

export interface FinishInfo {
  input: Pick<CompletionInput, 'endpoint' | 'requestId' | 'sessionId' | 'principal'> & { stream: boolean; model: string; guardrails?: string[] };
  resolution?: Resolution;
  subject?: AttemptSubject;
  status: number;
  error?: string;
  usage?: Usage;
  attempts: AttemptLog[];
  failedAttempts: number;
  startedAt: number;
  ttfbMs?: number;
  clientAborted?: boolean;
  /** Response cache / idempotency outcome. */
  cache?: RequestLogEntry['cache'];
  /** Cost of `usage` when the caller already computed it (saves a second price lookup). */
  cost?: number;
  /** Cost of a request served without an upstream call (cache hit, replay): it costs 0. */
  costSaved?: number;
  /** Who produced a stored answer (cache hit, replay), when there was no attempt. */
  served?: { provider: string; modelId: string };
}

/** Cost of a usage on the subject's price. */
export function costFor(svc: Pick<GatewayServices, 'state'>, subject: AttemptSubject | undefined, usage: Usage | undefined, media?: MediaUsage): number {
  if (!subject || !usage) return 0;
  const price = svc.state.catalog.pricing.lookup(subject.provider.config.id, subject.modelId);
  return costOf(usage, price) + (media ? mediaCostOf(media, price) : 0);
}

/** Queue the request-log row of a finished (or failed) request. */
/** What recording a finished request writes to: the request log, metrics, budgets and limits, webhooks. */
export type RecordDeps = Pick<GatewayServices, 'state' | 'clock' | 'usage' | 'prometheus' | 'webhooks' | 'budgets' | 'tokenLimits'>;

export function recordRequest(svc: RecordDeps, f: FinishInfo): void {
  const usage = f.usage ?? emptyUsage();
  const subject = f.subject;
  // One object literal with every field (absent ones undefined): no spread copies on the hot path.
  const entry: RequestLogEntry = {
    requestId: f.input.requestId,
    ts: f.startedAt,
    endpoint: f.input.endpoint,
    apiKeyId: f.input.principal.key?.id,
    sessionId: f.input.sessionId,
    requestedModel: f.input.model,
    combo: f.resolution?.combo?.name,
    strategy: f.resolution?.strategy,
    provider: subject ? subject.provider.config.id : f.served?.provider,
    model: subject ? subject.modelId : f.served?.modelId,
    account: subject?.account.name,
    status: f.status,
    error: f.error !== undefined ? f.error.slice(0, 2000) : undefined,
    stream: f.input.stream,
    tokensIn: usage.inputTokens,
    tokensOut: usage.outputTokens,
    tokensCached: usage.cachedInputTokens ?? 0,
    tokensReasoning: usage.reasoningTokens ?? 0,
    tokensCacheWrite: usage.cacheCreationInputTokens ?? 0,
    cost: f.costSaved !== undefined ? 0 : (f.cost ?? costFor(svc, subject, f.usage)),
    cache: f.cache,
    costSaved: f.costSaved,
    latencyMs: svc.clock.now() - f.startedAt,
    ttfbMs: f.ttfbMs,
    fallbackAttempts: f.failedAttempts,
    attempts: f.attempts,
    clientAborted: f.clientAborted ?? false,
    guardrails: f.input.guardrails !== undefined && f.input.guardrails.length > 0 ? f.input.guardrails.join(',') : undefined,
  };
  svc.usage.record(entry);
  svc.prometheus.record(entry);
  accountUsage(svc, entry);
  const event = entry.status < 400 ? 'request.completed' : 'request.failed';
  if (svc.webhooks.wants(event)) {
    svc.webhooks.emit(event, {
      requestId: entry.requestId,
      endpoint: entry.endpoint,
      model: entry.requestedModel,
      provider: entry.provider ?? null,
      apiKeyId: entry.apiKeyId ?? null,
      status: entry.status,
      ...(entry.error !== undefined ? { error: entry.error } : {}),
      tokensIn: entry.tokensIn,
      tokensOut: entry.tokensOut,
      cost: entry.cost,
      latencyMs: entry.latencyMs,
    });
  }
}

/**
 * A request failed (before or after routing): record it, and put the decision headers on the error
 * response when the model was resolved. Returns the error to throw (rendered by the component).
 */
export function failRequest(
  svc: RecordDeps,
  res: ServerResponse,
  e: unknown,
  f: { input: FinishInfo['input']; resolution?: Resolution; startedAt: number },
): HttpError {
  const err = gatewayHttpError(e);
  const { attempts, failedAttempts } = attemptsOf(e);
  // The failure is attributed to the last upstream that was actually called (latency and error stats).
  const lastCalled = [...attempts].reverse().find((a) => a.outcome === 'error');
  recordRequest(svc, {
    input: f.input,
    ...(f.resolution ? { resolution: f.resolution } : {}),
    ...(lastCalled ? { served: { provider: lastCalled.provider, modelId: lastCalled.model } } : {}),
    status: err.status,
    error: err.message,
    attempts,
    failedAttempts,
    startedAt: f.startedAt,
    clientAborted: err.status === 499,
  });
  if (f.resolution && !res.headersSent) {
    const lastTried = [...attempts].reverse().find((a) => a.outcome !== 'skipped');
    setTelemetryHeaders(res, {
      decision: { strategy: f.resolution.strategy, ...(lastTried ? { provider: lastTried.provider } : {}), latencyMs: svc.clock.now() - f.startedAt },
      requestId: f.input.requestId,
      ...(f.input.sessionId !== undefined ? { sessionId: f.input.sessionId } : {}),
      fallbackAttempts: failedAttempts,
    });
  }
  return err;
}

/** The attempt log and failure count an error carries (empty for errors raised before routing). */
export function attemptsOf(e: unknown): { attempts: AttemptLog[]; failedAttempts: number } {
  if (e instanceof AttemptsFailed) return { attempts: e.attempts, failedAttempts: e.failedAttempts };
  return { attempts: [], failedAttempts: 0 };
}
