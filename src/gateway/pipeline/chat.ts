/**
 * The stages of a chat request (every route completion-route.ts serves), between parsing and the
 * answer. Their order is the chat pipeline's contract (a replay or a cache hit spends no budget and
 * takes no concurrency slot; the output guardrails see the answer before it is cached or sent):
 * the route states it in one list (`chatPipeline`).
 */
import type { RequestContext } from '../../http/context.js';
import { HttpError } from '../../http/errors.js';
import type { AbortLike } from '../abort.js';
import type { StoredAnswer } from '../cache/answer.js';
import { idempotencyKeyOf } from '../cache/idempotency.js';
import { isDeterministic, requestSignature } from '../cache/signature.js';
import type { CanonicalRequest } from '../canonical.js';
import { startCompletion, type CompletionDeps, type CompletionInput, type CompletionStarted, type RecordDeps } from '../completion.js';
import { hasCacheMarkers } from '../compression/plan.js';
import type { Compressed } from '../compression/service.js';
import { guardAnswer } from '../guardrails/engine.js';
import { estimateUse } from '../limits/estimate.js';
import { checkLimits, type LimitCheck, type LimitDeps } from '../limits/index.js';
import { applyGeneral } from '../ops/request-settings.js';
import type { CompletionRoute } from '../routes/inference/completion-route.js';
import { injectContext, runSkillRounds, type InjectDeps } from '../routes/inference/context-injection.js';
import { guardChat, type GuardDeps } from '../routes/inference/guard.js';
import { serveStored } from '../routes/inference/stored-answer.js';
import type { GatewayServices } from '../services.js';
import type { SkillRecord } from '../skills/store.js';
import { Flight, type Stage, type Verdict } from './stage.js';

const NO_SKILLS = new Map<string, SkillRecord>();
const NO_LIMITS: LimitCheck = {};

/** One chat request in flight: what the stages set, in the order they set it. */
export class ChatFlight extends Flight {
  /** The client's body as parsed JSON (the compression plan looks for cache markers in it). */
  body: unknown = undefined;
  /** The canonical request, rewritten by guard, settings, inject and plugins (set by 'parse'). */
  request!: CanonicalRequest;
  /** Skills offered as tools (set by 'inject'). */
  skills: Map<string, SkillRecord> = NO_SKILLS;
  /** Whether this request holds an idempotency key (its answer is kept for the duplicates). */
  ticket = false;
  /** The response-cache signature, when the request is cacheable (set by 'cache'). */
  signature: string | undefined = undefined;
  limits: LimitCheck = NO_LIMITS;
  compressed: Compressed | undefined = undefined;
  /** What the attempt loop is given (set by 'attempts'; the skill rounds reuse it). */
  input: CompletionInput | undefined = undefined;
  started: CompletionStarted | undefined = undefined;

  constructor(
    ctx: RequestContext,
    readonly route: CompletionRoute,
  ) {
    super(ctx, route.providerScope);
  }
}

type ChatStage = Stage<ChatFlight>;
const next = (): Verdict => 'next';

/** The input guardrails (a block is recorded and answered 400; redactions rewrite the request). */
export function guardStage(svc: GuardDeps): ChatStage {
  return {
    name: 'guard',
    run: (f) =>
      guardChat(svc, f.ctx, f.request, f.info, f.startedAt).then((r) => {
        f.request = r;
        return next();
      }),
  };
}

/** The operator's general request settings (defaults, overrides). */
export function settingsStage(svc: Pick<GatewayServices, 'runtime'>): ChatStage {
  return {
    name: 'settings',
    run(f) {
      f.request = applyGeneral(svc.runtime.general.value, f.request);
      return 'next';
    },
  };
}

/** Memories and skills offered as tools (synchronous unless memories come from a shared database). */
export function injectStage(svc: InjectDeps): ChatStage {
  return {
    name: 'inject',
    run(f) {
      const injecting = injectContext(svc, f.ctx.req.headers, f.request, f.principal, f.sessionId);
      if (!(injecting instanceof Promise)) {
        f.request = injecting.request;
        f.skills = injecting.skills;
        return 'next';
      }
      return injecting.then((injected) => {
        f.request = injected.request;
        f.skills = injected.skills;
        return next();
      });
    },
  };
}

/** Active plugins' request hooks (sandboxed; a failing plugin is deactivated, a block is a 400). */
export function pluginsStage(svc: Pick<GatewayServices, 'plugins'>): ChatStage {
  return {
    name: 'plugins',
    run(f) {
      if (svc.plugins.activeCount === 0) return 'next';
      return svc.plugins.onRequest(f.request).then((r) => {
        f.request = r.request;
        return next();
      });
    },
  };
}

/** The key's max-tokens ceiling. */
export function policiesStage(svc: Pick<GatewayServices, 'policies'>): ChatStage {
  return {
    name: 'policies',
    run(f) {
      const req = f.request;
      const ceiling = svc.policies.maxTokens(f.principal.key?.id, req.maxTokens);
      if (ceiling !== req.maxTokens) req.maxTokens = ceiling;
      return 'next';
    },
  };
}

/** What serving a stored answer uses. */
type StoredDeps = RecordDeps & Pick<GatewayServices, 'version'>;

/** Wait for an in-flight duplicate to settle, or for the client to leave. */
function waitOrAbort(p: Promise<void>, signal: AbortLike): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      signal.removeEventListener('abort', done);
      resolve();
    };
    signal.addEventListener('abort', done, { once: true });
    void p.then(done);
  });
}

/** The idempotency key: a replay of the first answer, a wait for the in-flight duplicate, or this request's ticket. */
export function idempotencyStage(svc: StoredDeps & Pick<GatewayServices, 'idempotency'>): ChatStage {
  async function claimKey(f: ChatFlight, idemKey: string): Promise<Verdict> {
    const ns = f.principal.key?.id ?? '-';
    const canonical = f.request;
    const fingerprint = `${requestSignature(canonical, ns)}|${f.route.format}|${canonical.stream ? 's' : 'j'}`;
    for (;;) {
      const claim = svc.idempotency.shared ? await svc.idempotency.claimAcross(`${ns}\u0000${idemKey}`, fingerprint) : svc.idempotency.claim(`${ns}\u0000${idemKey}`, fingerprint);
      if (claim.kind === 'conflict') {
        throw new HttpError(409, `idempotency key ${JSON.stringify(idemKey)} was used for a different request within ${svc.idempotency.windowMs} ms`, {
          code: 'idempotency_key_reused',
        });
      }
      if (claim.kind === 'replay') {
        serveStored(f.ctx, svc, f.route, canonical, claim.answer, 'replay', f.info, f.resolution!, f.startedAt);
        return 'answered';
      }
      if (claim.kind === 'wait') {
        await waitOrAbort(claim.settled, f.abort!);
        if (f.abort!.aborted) throw new HttpError(499, 'client closed the request', { code: 'client_closed_request' });
        continue;
      }
      // Every exit completes the ticket: with the answer worth keeping, else with none.
      f.ticket = true;
      f.undo.push((kept) => claim.complete(kept));
      return 'next';
    }
  }
  return {
    name: 'idempotency',
    run(f) {
      const idemKey = idempotencyKeyOf(f.ctx.req.headers);
      return idemKey === undefined ? 'next' : claimKey(f, idemKey);
    },
  };
}

/** Whether the response cache may serve or keep this request's answer. */
function cacheable(svc: Pick<GatewayServices, 'runtime'>, ctx: RequestContext, canonical: CanonicalRequest): boolean {
  const s = svc.runtime.cache.value;
  if (!s.enabled) return false;
  if (String(ctx.req.headers['x-gateway-no-cache'] ?? '').toLowerCase() === 'true') return false;
  return s.mode === 'all' || isDeterministic(canonical);
}

/** The response cache: a hit is answered here (and kept for the idempotency ticket). */
export function cacheStage(svc: StoredDeps & Pick<GatewayServices, 'runtime' | 'cache'>): ChatStage {
  const served = (f: ChatFlight, hit: StoredAnswer | undefined): Verdict => {
    if (!hit) return 'next';
    f.kept = hit;
    serveStored(f.ctx, svc, f.route, f.request, hit, 'hit', f.info, f.resolution!, f.startedAt);
    return 'answered';
  };
  return {
    name: 'cache',
    run(f) {
      if (!cacheable(svc, f.ctx, f.request)) return 'next';
      const signature = (f.signature = requestSignature(f.request, f.principal.key?.id ?? '-'));
      if (svc.cache.sharedTier) return svc.cache.lookupAcross(signature).then((hit) => served(f, hit));
      return served(f, svc.cache.lookup(signature));
    },
  };
}

/** Requests per minute, budgets and token limits (429), with the request's estimated cost reserved. */
export function limitsStage(svc: LimitDeps & Pick<GatewayServices, 'state'>): ChatStage {
  return {
    name: 'limits',
    run(f) {
      const principal = f.principal;
      const resolution = f.resolution!;
      const reserve =
        principal.key && (svc.budgets.size > 0 || svc.tokenLimits.size > 0) ? { requestId: f.ctx.requestId, ...estimateUse(svc.state.catalog.pricing, resolution, f.request) } : undefined;
      return checkLimits(svc, principal, resolution, reserve).then((limits) => {
        f.limits = limits;
        return next();
      });
    },
  };
}

/** What the plan reads, when compression is off (it reads nothing then). */
const NO_PLAN_INPUT = { header: undefined, routingCombo: undefined, cacheMarkers: () => false };

/** The compression plan (`X-Gateway-Compression`, the combo's, the operator's). */
export function compressionStage(svc: Pick<GatewayServices, 'compression'>): ChatStage {
  return {
    name: 'compression',
    run(f) {
      // Off (the default): the same answer for every request, and no plan input built for it.
      if (!svc.compression.settings.value.enabled) {
        f.compressed = svc.compression.compress(f.request, NO_PLAN_INPUT);
        return 'next';
      }
      const header = f.ctx.req.headers['x-gateway-compression'];
      const body = f.body;
      f.compressed = svc.compression.compress(f.request, {
        header: typeof header === 'string' ? header : undefined,
        routingCombo: f.resolution!.combo?.name,
        cacheMarkers: () => hasCacheMarkers(body),
      });
      return 'next';
    },
  };
}

/** The attempt loop over the resolution's targets (breakers, cool-downs, fallback). */
export function attemptsStage(svc: CompletionDeps): ChatStage {
  return {
    name: 'attempts',
    run(f) {
      const input: CompletionInput = (f.input = {
        canonical: f.compressed!.request,
        principal: f.principal,
        endpoint: f.route.endpoint,
        requestId: f.ctx.requestId,
        signal: f.abort!,
        sessionId: f.sessionId,
      });
      return startCompletion(svc, input, f.resolution).then((started) => {
        f.started = started;
        return next();
      });
    },
  };
}

/** While a (non-streamed) answer calls only offered skills: run them and ask again. */
export function skillsStage(svc: CompletionDeps & Pick<GatewayServices, 'skills'>): ChatStage {
  return {
    name: 'skills',
    run(f) {
      if (f.skills.size === 0) return 'next';
      return runSkillRounds(svc, f.started!, f.input!, f.resolution!, f.skills).then((started) => {
        f.started = started;
        return next();
      });
    },
  };
}

/** Active plugins' response hooks (non-streamed answers). */
export function answerPluginsStage(svc: Pick<GatewayServices, 'plugins'>): ChatStage {
  return {
    name: 'answer-plugins',
    run(f) {
      const result = f.started!.result;
      if (result.stream || svc.plugins.activeCount === 0) return 'next';
      return svc.plugins.onResponse(f.request.model, result.response).then(next);
    },
  };
}

/** The answer's text through the output guardrails (secrets and PII), before it is cached or sent. */
export function answerGuardStage(svc: Pick<GatewayServices, 'state'>): ChatStage {
  return {
    name: 'answer-guard',
    run(f) {
      const result = f.started!.result;
      if (result.stream) return 'next';
      return guardAnswer(svc.state.fileConfig.guardrails, f.ctx.req.headers, result.response.content).then((out) => {
        if (out.hits.length > 0) {
          result.response.content = out.content;
          f.info.guardrails = [...(f.info.guardrails ?? []), ...out.hits];
        }
        return next();
      });
    },
  };
}
