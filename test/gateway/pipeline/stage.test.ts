/**
 * The gateway's stage runner (src/gateway/pipeline/stage.ts) and the stage list each inference route
 * states: the order is data, synchronous stages cost no promise, and the undo list runs once, last
 * first, on every exit.
 */
import { describe, expect, it } from 'vitest';
import type { RequestContext } from '../../../src/http/context.js';
import { HttpError } from '../../../src/http/errors.js';
import type { StoredAnswer } from '../../../src/gateway/cache/answer.js';
import { Flight, fly, settle, stageNames, type Pipeline, type Stage, type StageName } from '../../../src/gateway/pipeline/stage.js';
import { chatPipeline } from '../../../src/gateway/routes/inference/completion-route.js';
import { embeddingsPipeline } from '../../../src/gateway/routes/inference/embeddings.js';
import { formOperationPipeline, type FormOperation } from '../../../src/gateway/routes/inference/form-operation.js';
import { jsonOperationPipeline } from '../../../src/gateway/routes/inference/json-operations.js';
import { speechPipeline } from '../../../src/gateway/routes/inference/speech.js';
import type { GatewayServices } from '../../../src/gateway/services.js';

const ctx = () => ({ req: { headers: {} }, res: {}, state: { principal: { kind: 'anonymous' } }, requestId: 'r1' }) as unknown as RequestContext;

/** A stage that logs its name, optionally answering, failing, or waiting. */
function stage(log: string[], name: StageName, how: 'next' | 'answered' | 'throw' | 'async' | 'async-throw' = 'next', undo?: string): Stage<Flight> {
  return {
    name,
    run(f) {
      log.push(name);
      if (undo) f.undo.push((kept) => void log.push(`undo ${undo}${kept ? ` kept=${kept.ref}` : ''}`));
      if (how === 'throw') throw new Error(`${name} failed`);
      if (how === 'async') return Promise.resolve('next');
      if (how === 'async-throw') return Promise.reject(new Error(`${name} failed`));
      return how;
    },
  };
}

function pipeline(stages: Stage<Flight>[], log: string[]): Pipeline<Flight> {
  return { stages, fail: (_f, e) => (log.push(`fail ${(e as Error).message}`), new HttpError(502, 'recorded')) };
}

describe('fly: order', () => {
  it('runs synchronous stages in the same tick, in order, and stops at an answer', async () => {
    const log: string[] = [];
    const done = fly(pipeline([stage(log, 'parse'), stage(log, 'guard'), stage(log, 'cache', 'answered'), stage(log, 'limits')], log), new Flight(ctx()));
    // Nothing awaited yet: every synchronous stage has already run.
    expect(log).toEqual(['parse', 'guard', 'cache']);
    await done;
    expect(log).toEqual(['parse', 'guard', 'cache']);
  });

  it('waits only where a stage returns a promise, then goes on', async () => {
    const log: string[] = [];
    const done = fly(pipeline([stage(log, 'parse'), stage(log, 'guard', 'async'), stage(log, 'route'), stage(log, 'cache', 'answered'), stage(log, 'limits')], log), new Flight(ctx()));
    expect(log).toEqual(['parse', 'guard']);
    await done;
    expect(log).toEqual(['parse', 'guard', 'route', 'cache']);
  });
});

describe('fly', () => {
  it('runs the undo list once, last first, with the kept answer, when a stage answers', async () => {
    const log: string[] = [];
    const f = new Flight(ctx());
    const answer: Stage<Flight> = {
      name: 'cache',
      run(fl) {
        fl.kept = { ref: 'p/m' } as StoredAnswer;
        return 'answered';
      },
    };
    await fly(pipeline([stage(log, 'listen', 'next', 'close'), stage(log, 'idempotency', 'async', 'ticket'), answer, stage(log, 'concurrency', 'next', 'slot')], log), f);
    expect(log).toEqual(['listen', 'idempotency', 'undo ticket kept=p/m', 'undo close kept=p/m']);
    expect(f.undo).toEqual([]);
    settle(f);
    expect(log).toHaveLength(4);
  });

  it('records a failure once the request is in flight, and undoes what was acquired', async () => {
    const log: string[] = [];
    const listen: Stage<Flight> = { name: 'listen', run: (f) => ((f.recording = true), f.undo.push(() => void log.push('undo close')), 'next') };
    const p = pipeline([stage(log, 'parse'), listen, stage(log, 'concurrency', 'next', 'slot'), stage(log, 'attempts', 'async-throw'), stage(log, 'respond')], log);
    await expect(fly(p, new Flight(ctx()))).rejects.toThrow('recorded');
    expect(log).toEqual(['parse', 'concurrency', 'attempts', 'fail attempts failed', 'undo slot', 'undo close']);
  });

  it('passes a failure before the request is in flight through unrecorded', async () => {
    const log: string[] = [];
    await expect(fly(pipeline([stage(log, 'parse', 'throw', 'files')], log), new Flight(ctx()))).rejects.toThrow('parse failed');
    expect(log).toEqual(['parse', 'undo files']);
  });

  it('waits for an undo step that returns a promise (spooled files removed) before it settles', async () => {
    const log: string[] = [];
    const remove: Stage<Flight> = {
      name: 'parse',
      run(f) {
        f.undo.push(() => new Promise<void>((r) => setImmediate(() => (log.push('removed'), r()))));
        return 'next';
      },
    };
    await fly(pipeline([remove, stage(log, 'respond', 'answered')], log), new Flight(ctx()));
    expect(log).toEqual(['respond', 'removed']);
  });
});

describe('the stages each inference route states', () => {
  const svc = {} as GatewayServices;
  it('chat', () => {
    expect(stageNames(chatPipeline(svc))).toEqual([
      'parse',
      'guard',
      'settings',
      'inject',
      'plugins',
      'listen',
      'route',
      'policies',
      'idempotency',
      'cache',
      'limits',
      'concurrency',
      'compression',
      'attempts',
      'skills',
      'answer-plugins',
      'answer-guard',
      'respond',
    ]);
  });
  it('embeddings and the JSON operations: guarded, no idempotency, cache or compression', () => {
    const json = ['parse', 'guard', 'listen', 'route', 'targets', 'limits', 'concurrency', 'attempts', 'respond'];
    expect(stageNames(embeddingsPipeline(svc))).toEqual(json);
    expect(stageNames(jsonOperationPipeline(svc, { endpoint: 'rerank', route: '/v1/rerank', path: '/rerank', type: 'rerank' } as Parameters<typeof jsonOperationPipeline>[1]))).toEqual(json);
  });
  it('speech (no guardrails) and the form operations (checked once in flight)', () => {
    expect(stageNames(speechPipeline(svc))).toEqual(['parse', 'listen', 'route', 'targets', 'limits', 'concurrency', 'attempts', 'respond']);
    expect(stageNames(formOperationPipeline(svc, {} as FormOperation))).toEqual(['parse', 'listen', 'validate', 'route', 'targets', 'limits', 'concurrency', 'attempts', 'respond']);
  });
});
