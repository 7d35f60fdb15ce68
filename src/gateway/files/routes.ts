/**
 * OpenAI's Files API, scoped per API key (another key's file is a 404):
 *   POST   /v1/files               multipart `file`, `purpose`, `expires_after[anchor]`, `expires_after[seconds]`; 512 MiB max
 *   GET    /v1/files               `purpose`, `limit` (1–10000), `order` (asc|desc), `after`
 *   GET    /v1/files/{id}          the file object
 *   DELETE /v1/files/{id}
 *   GET    /v1/files/{id}/content  the bytes, streamed
 */
import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { RequestContext } from '../../http/context.js';
import { badRequest, HttpError } from '../../http/errors.js';
import { removeSpooled, spoolForm } from '../../http/multipart-spool.js';
import { sendJson } from '../../http/respond.js';
import type { Route, Router } from '../../http/router.js';
import type { Principal } from '../auth.js';
import { intQuery } from '../routes/common.js';
import type { FileService } from './service.js';
import type { FileRecord } from './store.js';

export const MAX_FILE_BYTES = 512 * 1024 * 1024;
export const PURPOSES = new Set(['assistants', 'batch', 'fine-tune', 'vision', 'user_data', 'evals']);
const MIN_EXPIRY_S = 3600;
const MAX_EXPIRY_S = 30 * 24 * 3600;

/** Whose files these are: the caller's API key id, or '' without a key. */
export const ownerOf = (ctx: RequestContext): string => (ctx.state.principal as Principal | undefined)?.key?.id ?? '';

const seconds = (ms: number) => Math.floor(ms / 1000);

export function fileObject(f: FileRecord): Record<string, unknown> {
  return {
    id: f.id,
    object: 'file',
    bytes: f.bytes,
    created_at: seconds(f.createdAt),
    filename: f.filename,
    purpose: f.purpose,
    ...(f.expiresAt !== undefined ? { expires_at: seconds(f.expiresAt) } : {}),
    status: 'processed',
    status_details: null,
  };
}

export const noSuchFile = (id: string) => new HttpError(404, `No such File object: ${id}`, { code: 'not_found' });

export function fileRoutes(r: Router, files: FileService, k: (route: Route) => Route): void {
  k(
    r.post('/v1/files', async (ctx) => {
      const form = await spoolForm(ctx, { dir: files.tmpDir, fileFields: ['file'], maxFiles: 1, maxBytes: MAX_FILE_BYTES, what: 'file', sha256: true });
      try {
        const file = form.files[0];
        if (!file) throw badRequest('file is required (a multipart file field named "file")');
        const purpose = form.fields.purpose;
        if (!purpose) throw badRequest('purpose is required (a form field)');
        if (!PURPOSES.has(purpose)) throw badRequest(`purpose must be one of ${[...PURPOSES].join(', ')}`);
        const anchor = form.fields['expires_after[anchor]'];
        const after = form.fields['expires_after[seconds]'];
        let expiresAt: number | undefined;
        if (anchor !== undefined || after !== undefined) {
          if (anchor !== 'created_at') throw badRequest('expires_after[anchor] must be created_at');
          const s = Number(after);
          if (!/^\d+$/.test(after ?? '') || s < MIN_EXPIRY_S || s > MAX_EXPIRY_S) throw badRequest(`expires_after[seconds] must be an integer from ${MIN_EXPIRY_S} to ${MAX_EXPIRY_S}`);
          expiresAt = files.now() + s * 1000;
        }
        const rec = await files.adopt(file.path, { owner: ownerOf(ctx), purpose, filename: file.filename, bytes: file.size, sha256: file.sha256!, ...(expiresAt !== undefined ? { expiresAt } : {}) });
        sendJson(ctx.res, 200, fileObject(rec));
      } finally {
        await removeSpooled(form.files);
      }
    }),
  );

  k(
    r.get('/v1/files', async (ctx) => {
      const order = ctx.query.get('order') ?? 'desc';
      if (order !== 'asc' && order !== 'desc') throw badRequest('order must be asc or desc');
      const limit = intQuery(ctx, 'limit', 10_000, 1, 10_000);
      const purpose = ctx.query.get('purpose') ?? undefined;
      const owner = ownerOf(ctx);
      const afterId = ctx.query.get('after');
      const after = afterId ? await files.get(owner, afterId) : undefined;
      if (afterId && !after) throw badRequest(`after: no file ${afterId}`);
      const rows = await files.store.list({ owner, ...(purpose ? { purpose } : {}), ...(after ? { after } : {}), limit, order });
      const data = rows.slice(0, limit).map(fileObject);
      sendJson(ctx.res, 200, { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: rows.length > limit });
    }),
  );

  const owned = async (ctx: RequestContext): Promise<FileRecord> => {
    const id = ctx.params.id!;
    const f = await files.get(ownerOf(ctx), id);
    if (!f) throw noSuchFile(id);
    return f;
  };

  k(r.get('/v1/files/:id', async (ctx) => sendJson(ctx.res, 200, fileObject(await owned(ctx)))));
  k(
    r.delete('/v1/files/:id', async (ctx) => {
      const f = await owned(ctx);
      await files.delete(f.id);
      sendJson(ctx.res, 200, { id: f.id, object: 'file', deleted: true });
    }),
  );
  k(
    r.get('/v1/files/:id/content', async (ctx) => {
      const f = await owned(ctx);
      const body = createReadStream(await files.localPath(f.id));
      await new Promise<void>((resolve, reject) => {
        body.once('open', () => resolve());
        body.once('error', reject);
      }).catch(() => {
        throw noSuchFile(f.id);
      });
      ctx.res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': f.bytes, 'Content-Disposition': `attachment; filename="${f.filename.replace(/["\\\r\n]/g, '_')}"` });
      await pipeline(body, ctx.res).catch(() => undefined); // the client left: nothing more to do
    }),
  );
}
