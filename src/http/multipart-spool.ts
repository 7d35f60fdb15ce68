/**
 * A multipart/form-data upload with one file, spooled to a temp file as it arrives (never held whole
 * in memory), with the text fields beside it: the file is capped while streaming (413), every busboy
 * stream has its error handled (a truncated body is a 400, never a crash), and on any failure the
 * rest of the body is discarded and the temp file removed. The caller removes the file when done.
 */
import type Busboy from 'busboy';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { discardBody } from './body-budget.js';
import { mediaType } from './body.js';
import type { RequestContext } from './context.js';
import { HttpError, payloadTooLarge, unsupportedMediaType } from './errors.js';
import { lazyRequire } from './lazy.js';

const busboy = lazyRequire<typeof Busboy>('busboy');

export interface SpooledUpload {
  /** The temp file holding the upload. */
  path: string;
  /** The file name the client gave. */
  filename: string;
  mimeType: string;
  size: number;
  /** Text fields (the last value of a repeated one wins; `name[]` fields are collected in `lists`). */
  fields: Record<string, string>;
  lists: Record<string, string[]>;
}

export interface SpoolOptions {
  dir: string;
  fileField: string;
  maxBytes: number;
  /** Phrase for messages: "audio file", "image". */
  what: string;
}

export async function spoolUpload(ctx: RequestContext, o: SpoolOptions): Promise<SpooledUpload> {
  if (mediaType(ctx) !== 'multipart/form-data') {
    throw unsupportedMediaType(`unsupported media type "${mediaType(ctx) || 'none'}": send multipart/form-data with the ${o.what} in a field named "${o.fileField}"`);
  }
  const declared = Number(ctx.req.headers['content-length']);
  if (Number.isFinite(declared) && declared > o.maxBytes + 64 * 1024) {
    discardBody(ctx.req);
    throw payloadTooLarge(`${o.what} larger than ${o.maxBytes} bytes`);
  }
  mkdirSync(o.dir, { recursive: true, mode: 0o700 });
  let bb: Busboy.Busboy;
  try {
    bb = busboy()({ headers: ctx.req.headers, limits: { files: 1, fileSize: o.maxBytes, fields: 50, fieldSize: 64 * 1024, parts: 60 } });
  } catch (e) {
    discardBody(ctx.req);
    throw new HttpError(400, `bad multipart request: ${(e as Error).message}`);
  }
  const path = join(o.dir, `.upload-${randomBytes(16).toString('hex')}`);
  return await new Promise<SpooledUpload>((resolve, reject) => {
    const fields: Record<string, string> = {};
    const lists: Record<string, string[]> = {};
    let saving: Promise<{ filename: string; mimeType: string; size: number }> | null = null;
    let out: ReturnType<typeof createWriteStream> | null = null;
    let failed: HttpError | null = null;
    let settled = false;
    const abandon = (err: HttpError) => {
      if (settled) return;
      settled = true;
      out?.destroy();
      ctx.req.unpipe(bb);
      bb.removeAllListeners('close');
      discardBody(ctx.req);
      rm(path, { force: true })
        .catch(() => undefined)
        .finally(() => reject(err));
    };
    bb.on('field', (name, value) => {
      if (name.endsWith('[]')) (lists[name.slice(0, -2)] ??= []).push(value);
      else fields[name] = value;
    });
    bb.on('file', (field, stream, info) => {
      stream.on('error', (e: Error) => abandon(new HttpError(400, `bad multipart request: ${e.message}`)));
      if (field !== o.fileField || saving) {
        stream.resume();
        if (!failed) failed = new HttpError(400, field !== o.fileField ? `unexpected file field "${field}": send the ${o.what} in a field named "${o.fileField}"` : `send one ${o.what} per request`);
        return;
      }
      saving = new Promise((res, rej) => {
        out = createWriteStream(path, { mode: 0o600 });
        let size = 0;
        stream.on('data', (chunk: Buffer) => (size += chunk.length));
        stream.on('limit', () => abandon(payloadTooLarge(`${o.what} larger than ${o.maxBytes} bytes`)));
        stream.pipe(out);
        out.on('error', (e) => rej(new HttpError(500, `saving the upload: ${e.message}`)));
        out.on('finish', () => res({ filename: info.filename || 'upload', mimeType: (info.mimeType || 'application/octet-stream').toLowerCase(), size }));
      });
      saving.catch(() => undefined);
    });
    bb.on('partsLimit', () => abandon(new HttpError(400, 'too many parts in the multipart body')));
    bb.on('fieldsLimit', () => abandon(new HttpError(400, 'too many fields in the multipart body')));
    bb.on('error', (e) => abandon(new HttpError(400, `bad multipart request: ${(e as Error).message}`)));
    bb.on('close', () => {
      const done = async () => {
        if (!saving) throw failed ?? new HttpError(400, `no ${o.what} in the request: send it in a multipart field named "${o.fileField}"`);
        const saved = await saving;
        if (failed) throw failed;
        if (saved.size === 0) throw new HttpError(400, `the ${o.what} is empty`);
        return { path, ...saved, fields, lists };
      };
      done().then(
        (u) => {
          if (settled) return;
          settled = true;
          resolve(u);
        },
        (e: unknown) => {
          if (settled) return;
          settled = true;
          rm(path, { force: true })
            .catch(() => undefined)
            .finally(() => reject(e instanceof HttpError ? e : new HttpError(500, (e as Error).message)));
        },
      );
    });
    ctx.req.on('error', (e) => abandon(new HttpError(400, `request body: ${e.message}`)));
    ctx.req.pipe(bb);
  });
}
