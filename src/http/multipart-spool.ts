/**
 * A multipart/form-data upload whose files are spooled to temp files as they arrive (never held whole
 * in memory), with the text fields beside them: each file and their total are capped while streaming
 * (413), every busboy stream has its error handled (a truncated body is a 400, never a crash), and on
 * any failure the rest of the body is discarded and the temp files removed. The caller removes the
 * files when done (`removeSpooled`).
 */
import type Busboy from 'busboy';
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { discardBody } from './body-budget.js';
import { mediaType } from './body.js';
import type { RequestContext } from './context.js';
import { HttpError, payloadTooLarge, unsupportedMediaType } from './errors.js';
import { lazyRequire } from './lazy.js';

const busboy = lazyRequire<typeof Busboy>('busboy');

export interface SpooledFile {
  /** The form field it came in (`image[]` is reported as `image[]`). */
  field: string;
  /** The temp file holding the upload. */
  path: string;
  /** The file name the client gave. */
  filename: string;
  mimeType: string;
  size: number;
  /** Hex SHA-256 of the content, when asked for (`sha256: true`). */
  sha256?: string;
}

export interface SpooledForm {
  /** In the order they arrived. */
  files: SpooledFile[];
  /** Text fields (the last value of a repeated one wins; `name[]` fields are collected in `lists`). */
  fields: Record<string, string>;
  lists: Record<string, string[]>;
}

export interface FormSpoolOptions {
  dir: string;
  /** Field names that may carry a file. */
  fileFields: readonly string[];
  maxFiles: number;
  /** Cap on each file. */
  maxBytes: number;
  /** Cap on all files together (default: maxBytes). */
  maxTotalBytes?: number;
  /** Phrase for messages: "audio file", "image". */
  what: string;
  /** Hash each file as it arrives. */
  sha256?: boolean;
}

/** Removes the temp files of a spooled form (never throws). */
export async function removeSpooled(files: readonly { path: string }[]): Promise<void> {
  await Promise.all(files.map((f) => rm(f.path, { force: true }).catch(() => undefined)));
}

/** Resolves once a temp file's stream has closed (its file exists or never will); at most 2 s. */
function closed(out: ReturnType<typeof createWriteStream>): Promise<void> {
  if (out.closed) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(resolve, 2000);
    out.once('close', () => {
      clearTimeout(t);
      resolve();
    });
  });
}

export async function spoolForm(ctx: RequestContext, o: FormSpoolOptions): Promise<SpooledForm> {
  const total = o.maxTotalBytes ?? o.maxBytes;
  const named = o.fileFields.map((f) => `"${f}"`).join(' or ');
  if (mediaType(ctx) !== 'multipart/form-data') {
    throw unsupportedMediaType(`unsupported media type "${mediaType(ctx) || 'none'}": send multipart/form-data with the ${o.what} in a field named ${named}`);
  }
  const declared = Number(ctx.req.headers['content-length']);
  if (Number.isFinite(declared) && declared > total + 64 * 1024) {
    discardBody(ctx.req);
    throw payloadTooLarge(`${o.what} larger than ${total} bytes`);
  }
  mkdirSync(o.dir, { recursive: true, mode: 0o700 });
  let bb: Busboy.Busboy;
  try {
    bb = busboy()({ headers: ctx.req.headers, limits: { files: o.maxFiles + 1, fileSize: o.maxBytes, fields: 50, fieldSize: 64 * 1024, parts: 60 + o.maxFiles } });
  } catch (e) {
    discardBody(ctx.req);
    throw new HttpError(400, `bad multipart request: ${(e as Error).message}`);
  }
  return await new Promise<SpooledForm>((resolve, reject) => {
    const fields: Record<string, string> = {};
    const lists: Record<string, string[]> = {};
    const saving: Promise<SpooledFile>[] = [];
    const paths: { path: string }[] = [];
    const outs: ReturnType<typeof createWriteStream>[] = [];
    let received = 0;
    let failed: HttpError | null = null;
    let settled = false;
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      // A temp file still being opened would appear after a removal now: remove once each is closed.
      void Promise.all(outs.map(closed))
        .then(() => removeSpooled(paths))
        .finally(() => reject(err instanceof HttpError ? err : new HttpError(500, (err as Error).message)));
    };
    const abandon = (err: HttpError) => {
      if (settled) return;
      for (const out of outs) out.destroy();
      ctx.req.unpipe(bb);
      bb.removeAllListeners('close');
      discardBody(ctx.req);
      fail(err);
    };
    const tooLarge = () => payloadTooLarge(`${o.what} larger than ${o.maxBytes} bytes`);
    bb.on('field', (name, value) => {
      if (name.endsWith('[]')) (lists[name.slice(0, -2)] ??= []).push(value);
      else fields[name] = value;
    });
    bb.on('file', (field, stream, info) => {
      stream.on('error', (e: Error) => abandon(new HttpError(400, `bad multipart request: ${e.message}`)));
      // Parts busboy had buffered still arrive after a failure: read and drop them, write nothing.
      if (settled) {
        stream.resume();
        return;
      }
      if (!o.fileFields.includes(field) || saving.length >= o.maxFiles) {
        stream.resume();
        if (!failed) {
          failed = new HttpError(
            400,
            !o.fileFields.includes(field) ? `unexpected file field "${field}": send the ${o.what} in a field named ${named}` : o.maxFiles === 1 ? `send one ${o.what} per request` : `send at most ${o.maxFiles} files per request`,
          );
        }
        return;
      }
      const path = join(o.dir, `.upload-${randomBytes(16).toString('hex')}`);
      paths.push({ path });
      const one = new Promise<SpooledFile>((res, rej) => {
        const out = createWriteStream(path, { mode: 0o600 });
        outs.push(out);
        let size = 0;
        const hash = o.sha256 ? createHash('sha256') : undefined;
        stream.on('data', (chunk: Buffer) => {
          size += chunk.length;
          hash?.update(chunk);
          received += chunk.length;
          if (received > total) abandon(payloadTooLarge(`${o.what} larger than ${total} bytes`));
        });
        stream.on('limit', () => abandon(tooLarge()));
        stream.pipe(out);
        out.on('error', (e) => rej(new HttpError(500, `saving the upload: ${e.message}`)));
        out.on('finish', () =>
          res({ field, path, filename: info.filename || 'upload', mimeType: (info.mimeType || 'application/octet-stream').toLowerCase(), size, ...(hash ? { sha256: hash.digest('hex') } : {}) }),
        );
      });
      one.catch(() => undefined);
      saving.push(one);
    });
    bb.on('partsLimit', () => abandon(new HttpError(400, 'too many parts in the multipart body')));
    bb.on('fieldsLimit', () => abandon(new HttpError(400, 'too many fields in the multipart body')));
    bb.on('error', (e) => abandon(new HttpError(400, `bad multipart request: ${(e as Error).message}`)));
    bb.on('close', () => {
      const done = async () => {
        const files = await Promise.all(saving);
        if (failed) throw failed;
        const empty = files.find((f) => f.size === 0);
        if (empty) throw new HttpError(400, `the ${o.what} ${o.maxFiles > 1 ? `"${empty.filename}" ` : ''}is empty`);
        return { files, fields, lists };
      };
      done().then((u) => {
        if (settled) return;
        settled = true;
        resolve(u);
      }, fail);
    });
    ctx.req.on('error', (e) => abandon(new HttpError(400, `request body: ${e.message}`)));
    ctx.req.pipe(bb);
  });
}
