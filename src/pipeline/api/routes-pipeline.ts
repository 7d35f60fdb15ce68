import { notFound } from '../../http/errors.js';
import type { Services } from '../services.js';
import { type ApiRegistry, Reply, queryBool, queryInt } from './registry.js';
import { PipelineStatus, RunRecord, RunResult, RunStarted } from './schemas.js';
import { Type } from '@sinclair/typebox';

export function pipelineRoutes(api: ApiRegistry, s: Services): void {
  api.add({
    method: 'POST',
    path: '/api/pipeline/run',
    tag: 'pipeline',
    summary:
      'Run the pipeline once: fetch the active sources, rank, draft one batch of pending posts. Waits for the result unless wait=false (then 202 and poll /api/pipeline/status).',
    query: [{ name: 'wait', schema: { type: 'boolean', default: true }, description: 'false: answer 202 at once' }],
    response: RunResult,
    errors: [400, 409, 502, 503],
    handler: async (ctx) => {
      const wait = queryBool(ctx, 'wait', true);
      const { batchId, done } = await s.runner.start();
      if (!wait) {
        done.catch((e: unknown) => s.log.warn({ err: (e as Error).message, batch: batchId }, 'pipeline run failed'));
        return new Reply(202, { batch_id: batchId, status: 'running', status_url: `/api/pipeline/runs/${batchId}` });
      }
      return await done;
    },
  });

  api.add({
    method: 'GET',
    path: '/api/pipeline/status',
    tag: 'pipeline',
    summary: 'Progress of the run in progress (or the last run of this daemon process)',
    response: PipelineStatus,
    handler: () => s.runner.progress(),
  });

  api.add({
    method: 'GET',
    path: '/api/pipeline/runs',
    tag: 'pipeline',
    summary: 'Recent pipeline runs, newest first',
    query: [{ name: 'limit', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 }, description: 'how many' }],
    response: Type.Array(RunRecord),
    handler: (ctx) => s.runs.recent(queryInt(ctx, 'limit', 20, 1, 100)),
  });

  api.add({
    method: 'GET',
    path: '/api/pipeline/runs/:batch_id',
    tag: 'pipeline',
    summary: 'One pipeline run by its batch id (live progress while it runs)',
    params: { batch_id: { schema: { type: 'string' }, description: 'batch id' } },
    response: RunRecord,
    errors: [404],
    handler: async (ctx) => {
      const id = ctx.params.batch_id ?? '';
      const run = id.length <= 100 ? await s.runs.get(id) : undefined;
      if (!run) throw notFound(`Run ${id} not found`);
      const live = s.runner.progress();
      if (run.status === 'running' && live.run?.batch_id === id) return { ...run, stage: live.run.stage, progress: live.run };
      return run;
    },
  });
}
