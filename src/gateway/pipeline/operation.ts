/**
 * The stages of a non-chat inference operation (embeddings, the JSON operations, speech, and the
 * multipart ones: transcriptions, image edits). Each route states its list; the shared middle is
 * 'targets' (the targets that can serve it), 'limits', 'concurrency' and 'attempts' (the capable
 * targets in the strategy's order: fallback, retries, breakers).
 */
import type { RequestContext } from '../../http/context.js';
import type { AbortLike } from '../abort.js';
import { attemptDeps, failRequest, type RecordDeps } from '../completion.js';
import { checkLimits, type LimitDeps } from '../limits/index.js';
import { guardJson, type GuardDeps } from '../routes/inference/guard.js';
import { runAttempts, type AttemptSuccess } from '../routing/attempts.js';
import type { AttemptSubject } from '../routing/policy.js';
import type { Resolution } from '../routing/resolve.js';
import { orderTargets } from '../routing/strategies.js';
import type { GatewayServices } from '../services.js';
import { Flight, type Pipeline, type Stage, type Verdict } from './stage.js';

type Target = Resolution['targets'][number];

/** One operation request in flight: its parsed body `B` and, once the attempts succeed, the upstream's answer `R`. */
export class OperationFlight<B, R> extends Flight {
  /** The parsed (and guarded) body (set by 'parse', rewritten by 'guard'). */
  body!: B;
  /** The model the client asked for (set by 'parse'). */
  model = '';
  /** The targets that can serve it (set by 'targets'). */
  capable: Target[] = [];
  /** The successful attempt (set by 'attempts'). */
  run: AttemptSuccess<R> | undefined = undefined;

  constructor(ctx: RequestContext, providerScope?: string) {
    super(ctx, providerScope);
  }

  /** What 'parse' ends with: the body, the model, the start time and the request-log input. */
  begin(body: B, model: string, endpoint: string, stream: boolean, now: number): void {
    this.body = body;
    this.model = model;
    this.startedAt = now;
    const sessionId = this.sessionId;
    this.info = { endpoint, requestId: this.ctx.requestId, principal: this.principal, stream, model, ...(sessionId !== undefined ? { sessionId } : {}) };
  }
}

const next = (): Verdict => 'next';

/** A failure once the request is in flight: recorded in the request log, with the decision headers. */
export function recordFailure<F extends Flight>(svc: RecordDeps): Pipeline<F>['fail'] {
  return (f, e) => failRequest(svc, f.ctx.res, e, { input: f.info, ...(f.resolution ? { resolution: f.resolution } : {}), startedAt: f.startedAt });
}

/** The guardrails over a JSON body's prompt fields (a block is recorded and answered 400; redactions rewrite them). */
export function guardBodyStage<F extends Flight>(svc: GuardDeps, fields: (f: F) => Record<string, unknown>, put: (f: F, guarded: Record<string, unknown>) => void): Stage<F> {
  return {
    name: 'guard',
    run: (f) =>
      guardJson(svc, f.ctx, fields(f), f.info, f.startedAt).then((g) => {
        put(f, g);
        return next();
      }),
  };
}

/** The resolution's targets that can serve this operation (none: a 400 naming the first and why). */
export function targetsStage<B, R>(capable: (f: OperationFlight<B, R>, resolution: Resolution) => Target[]): Stage<OperationFlight<B, R>> {
  return {
    name: 'targets',
    run(f) {
      f.capable = capable(f, f.resolution!);
      return 'next';
    },
  };
}

/** Requests per minute, budgets and token limits (429); an operation reserves nothing up front. */
export function operationLimitsStage(svc: LimitDeps): Stage<Flight> {
  return {
    name: 'limits',
    run: (f) => checkLimits(svc, f.principal, f.resolution!, { requestId: f.ctx.requestId, usd: 0, tokens: 0 }).then(next),
  };
}

/** The attempts over the capable targets; the provider's slot is given back on exit. */
export function operationAttemptsStage<B, R>(
  svc: Pick<GatewayServices, 'state' | 'strategy' | 'policy' | 'metrics' | 'clock' | 'sleep' | 'concurrency'>,
  call: (f: OperationFlight<B, R>, s: AttemptSubject, signal: AbortLike) => Promise<R>,
): Stage<OperationFlight<B, R>> {
  return {
    name: 'attempts',
    run(f) {
      const settings = svc.state.catalog.settings;
      const resolution = f.resolution!;
      const key = f.principal.key;
      const sessionId = f.sessionId;
      return runAttempts(
        {
          resolution,
          ordered: orderTargets(resolution.strategy, resolution.combo, f.capable, svc.strategy),
          request: { requestId: f.ctx.requestId, ...(sessionId ? { sessionId } : {}), ...(key ? { apiKeyId: key.id, accountId: key.accountId } : {}) },
          maxAttempts: resolution.combo?.maxAttempts ?? settings.maxAttempts,
          retryWaitMaxMs: settings.retryWaitMaxMs,
          signal: f.abort!,
        },
        attemptDeps(svc),
        (s, signal) => call(f, s, signal),
      ).then((run) => {
        f.run = run;
        f.undo.push(run.release);
        return next();
      });
    },
  };
}
