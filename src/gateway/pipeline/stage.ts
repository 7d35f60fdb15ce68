/**
 * The gateway's request path as data: each inference route states an ordered list of named stages
 * (parse, guard, route, idempotency, cache, limits, concurrency, attempts, respond…), and one plain
 * loop runs them over the request's flight, the one object a request allocates here. The shape is
 * Alertmanager's notification pipeline (notify/notify.go: `MultiStage.Exec` loops over its stages
 * and stops when one leaves nothing to do), not an onion of middleware: a stage that answers
 * synchronously is not awaited, and only a stage that returns a promise is.
 *
 * What a request acquires on the way (the client's close listener, the idempotency ticket, the
 * global concurrency slot, spooled upload files) goes on the flight's undo list as it is acquired,
 * and the list runs once, last first, however the request ends: answered, replayed, failed or
 * abandoned.
 */
import type { RequestContext } from '../../http/context.js';
import { ownTurn } from '../../http/turns.js';
import type { HttpError } from '../../http/errors.js';
import type { RequestAbort } from '../abort.js';
import type { Principal } from '../auth.js';
import type { StoredAnswer } from '../cache/answer.js';
import type { FinishInfo } from '../completion.js';
import type { Resolution } from '../routing/resolve.js';
import { sessionIdOf } from '../telemetry.js';

/** Every stage any route uses, in the order they may appear. */
export type StageName =
  | 'parse'
  | 'guard'
  | 'settings'
  | 'inject'
  | 'plugins'
  | 'listen'
  | 'validate'
  | 'route'
  | 'policies'
  | 'targets'
  | 'idempotency'
  | 'cache'
  | 'limits'
  | 'concurrency'
  | 'compression'
  | 'attempts'
  | 'skills'
  | 'answer-plugins'
  | 'answer-guard'
  | 'respond';

/** 'answered': the stage wrote the answer itself (a replay, a cache hit, the response); the rest is skipped. Throw to fail. */
export type Verdict = 'next' | 'answered';

export interface Stage<F extends Flight> {
  readonly name: StageName;
  run(f: F): Verdict | Promise<Verdict>;
}

/** One undo step; `kept` is the answer worth keeping (for the idempotency ticket), if any. May wait (files to remove). */
export type Undo = (kept: StoredAnswer | undefined) => void | Promise<void>;

/** A route's stages, and what a failure becomes once the request is in flight. */
export interface Pipeline<F extends Flight> {
  readonly stages: readonly Stage<F>[];
  /** A failure after 'listen' (and before 'respond'): recorded in the request log, the error to throw. */
  fail(f: F, e: unknown): HttpError;
}

/** The state of one request between its route and its answer; routes extend it with their own fields. */
export class Flight {
  readonly principal: Principal;
  readonly sessionId: string | undefined;
  /** The request-log input (set by 'parse'). */
  info!: FinishInfo['input'];
  /** When the request started, for latency and the request log (set by 'parse'). */
  startedAt = 0;
  /** Fires when the client leaves before the answer is complete (set by 'listen'). */
  abort: RequestAbort | undefined = undefined;
  /** Set by 'route'. */
  resolution: Resolution | undefined = undefined;
  /** Between 'listen' and 'respond': a failure is recorded in the request log (`Pipeline.fail`). */
  recording = false;
  /** The answer the idempotency ticket keeps (a cache hit, or the upstream's answer). */
  kept: StoredAnswer | undefined = undefined;
  /** Run once, last first, on every exit (`settle`). */
  readonly undo: Undo[] = [];
  /**
   * A request whose stages each take milliseconds (a chat of thousands of messages; set by 'parse'):
   * the loop is given back between its stages (ownTurn), so no turn of the loop holds more than one
   * of them, of this request or another.
   */
  heavy = false;

  /** `providerScope`: the provider of a provider-scoped route (its model must resolve there). */
  constructor(
    readonly ctx: RequestContext,
    readonly providerScope?: string,
  ) {
    this.principal = ctx.state.principal as Principal;
    this.sessionId = sessionIdOf(ctx.req);
  }
}

/** Run the undo list once, last first; a promise only when a step has to wait. */
export function settle(f: Flight): void | Promise<void> {
  const list = f.undo;
  let waits: Promise<void>[] | undefined;
  while (list.length > 0) {
    const w = list.pop()!(f.kept);
    if (w) (waits ??= []).push(w);
  }
  if (waits) return Promise.all(waits).then(() => undefined);
}

/**
 * Serve one request through a pipeline: the stages in order until one answers, a recorded failure,
 * the undo list on every exit. A stage that answers synchronously is not awaited: the loop goes on
 * in the same tick, so a request pays for a promise only where a stage waits for something.
 */
export async function fly<F extends Flight>(p: Pipeline<F>, f: F): Promise<void> {
  const stages = p.stages;
  try {
    for (let i = 0; i < stages.length; i++) {
      let v = stages[i]!.run(f);
      if (v instanceof Promise) v = await v;
      if (v === 'answered') break;
      if (f.heavy) await ownTurn();
    }
  } catch (e) {
    throw f.recording ? p.fail(f, e) : e;
  } finally {
    const w = settle(f);
    if (w) await w;
  }
}

/** The stage names of a pipeline, in order (what a test asserts). */
export function stageNames(p: Pipeline<Flight> | { stages: readonly { name: StageName }[] }): StageName[] {
  return p.stages.map((s) => s.name);
}
