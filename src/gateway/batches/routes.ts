/**
 * OpenAI's Batch API, scoped per API key (another key's batch is a 404):
 *   POST   /v1/batches              `input_file_id` (a `batch` file), `endpoint`, `completion_window` (24h), `metadata`
 *   GET    /v1/batches              newest first; `limit` (1–100, 20), `after`
 *   GET    /v1/batches/{id}
 *   POST   /v1/batches/{id}/cancel
 *   DELETE /v1/batches/{id}         a finished batch (completed, failed, expired or cancelled)
 */
import type { RequestContext } from '../../http/context.js';
import { badRequest, HttpError } from '../../http/errors.js';
import { sendJson } from '../../http/respond.js';
import type { Route, Router } from '../../http/router.js';
import { ownerOf } from '../files/routes.js';
import type { FileService } from '../files/service.js';
import { intQuery } from '../routes/common.js';
import { readInferenceBody } from '../routes/inference/completion-route.js';
import { BATCH_ENDPOINTS, type BatchService } from './service.js';
import { TERMINAL, type BatchRecord } from './store.js';

const sec = (ms: number | undefined) => (ms === undefined ? null : Math.floor(ms / 1000));
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function batchObject(b: BatchRecord, counts: { completed: number; failed: number }): Record<string, unknown> {
  return {
    id: b.id,
    object: 'batch',
    endpoint: b.endpoint,
    errors: b.errors ? { object: 'list', data: b.errors.map((e) => ({ code: e.code, message: e.message, param: e.param ?? null, line: e.line ?? null })) } : null,
    input_file_id: b.inputFileId,
    completion_window: b.completionWindow,
    status: b.status,
    output_file_id: b.outputFileId ?? null,
    error_file_id: b.errorFileId ?? null,
    created_at: sec(b.createdAt),
    in_progress_at: sec(b.inProgressAt),
    expires_at: sec(b.expiresAt),
    finalizing_at: sec(b.finalizingAt),
    completed_at: sec(b.completedAt),
    failed_at: sec(b.failedAt),
    expired_at: sec(b.expiredAt),
    cancelling_at: sec(b.cancellingAt),
    cancelled_at: sec(b.cancelledAt),
    request_counts: { total: b.total, completed: counts.completed, failed: counts.failed },
    metadata: b.metadata ?? null,
  };
}

function checkMetadata(v: unknown): Record<string, string> | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw badRequest('metadata must be an object of strings');
  const entries = Object.entries(v);
  if (entries.length > 16) throw badRequest('metadata: at most 16 keys');
  for (const [k, val] of entries) {
    if (k.length > 64) throw badRequest('metadata: keys are at most 64 characters');
    if (typeof val !== 'string' || val.length > 512) throw badRequest(`metadata.${k} must be a string of at most 512 characters`);
  }
  return v as Record<string, string>;
}

export function batchRoutes(r: Router, batches: BatchService, files: FileService, k: (route: Route) => Route): void {
  const view = async (b: BatchRecord) => batchObject(b, await batches.store.counts(b.id));
  const owned = async (ctx: RequestContext): Promise<BatchRecord> => {
    const id = ctx.params.id!;
    const b = /^batch_[0-9a-f]{24}$/.test(id) ? await batches.store.get(id) : undefined;
    if (!b || b.owner !== ownerOf(ctx)) throw new HttpError(404, `No such Batch object: ${id}`, { code: 'not_found' });
    return b;
  };

  k(
    r.post('/v1/batches', async (ctx) => {
      const body = await readInferenceBody(ctx);
      if (!isObject(body)) throw badRequest('body must be a JSON object');
      const owner = ownerOf(ctx);
      if (typeof body.input_file_id !== 'string' || body.input_file_id === '') throw badRequest('input_file_id is required (a string)');
      const input = await files.get(owner, body.input_file_id);
      if (!input) throw badRequest(`input_file_id: no file ${body.input_file_id}`, { details: { param: 'input_file_id' } });
      if (input.purpose !== 'batch') throw badRequest(`input_file_id: file ${input.id} has purpose ${input.purpose}; upload the input with purpose batch`);
      if (typeof body.endpoint !== 'string' || !(BATCH_ENDPOINTS as readonly string[]).includes(body.endpoint)) throw badRequest(`endpoint must be one of ${BATCH_ENDPOINTS.join(', ')}`);
      if (body.completion_window !== '24h') throw badRequest('completion_window must be 24h');
      const metadata = checkMetadata(body.metadata);
      const b = await batches.create({ owner, endpoint: body.endpoint, inputFileId: input.id, completionWindow: '24h', ...(metadata ? { metadata } : {}) });
      sendJson(ctx.res, 200, await view(b));
    }),
  );

  k(
    r.get('/v1/batches', async (ctx) => {
      const limit = intQuery(ctx, 'limit', 20, 1, 100);
      const owner = ownerOf(ctx);
      const afterId = ctx.query.get('after');
      const after = afterId ? await batches.store.get(afterId) : undefined;
      if (afterId && (!after || after.owner !== owner)) throw badRequest(`after: no batch ${afterId}`);
      const rows = await batches.store.list(owner, limit, after);
      const data = await Promise.all(rows.slice(0, limit).map(view));
      sendJson(ctx.res, 200, { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: rows.length > limit });
    }),
  );

  k(r.get('/v1/batches/:id', async (ctx) => sendJson(ctx.res, 200, await view(await owned(ctx)))));

  k(
    r.post('/v1/batches/:id/cancel', async (ctx) => {
      const b = await owned(ctx);
      if (!(await batches.cancel(b.id))) throw badRequest(`Cannot cancel a batch with status '${b.status}'.`);
      sendJson(ctx.res, 200, await view((await batches.store.get(b.id))!));
    }),
  );

  k(
    r.delete('/v1/batches/:id', async (ctx) => {
      const b = await owned(ctx);
      if (!TERMINAL.has(b.status)) throw badRequest(`Cannot delete a batch with status '${b.status}': cancel it first, or wait until it ends.`);
      await batches.store.delete(b.id);
      sendJson(ctx.res, 200, { id: b.id, object: 'batch', deleted: true });
    }),
  );
}
