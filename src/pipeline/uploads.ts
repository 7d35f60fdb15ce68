/**
 * Post images: multipart/form-data parsed with busboy, one file field (`file` or `image`), size
 * capped while streaming (413), type checked by the declared type and by the file's magic bytes
 * (415), written under the component's uploads dir with a random name (temp file + rename).
 */
import type Busboy from 'busboy';
import { lazyRequire } from '../http/lazy.js';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { RequestContext } from '../http/context.js';
import { HttpError, payloadTooLarge, unsupportedMediaType } from '../http/errors.js';
import { mediaType } from '../http/body.js';
import { discardBody } from '../http/body-budget.js';

const busboy = lazyRequire<typeof Busboy>('busboy');

export const IMAGE_TYPES: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};
const FILE_FIELDS = new Set(['file', 'image']);
/** Stored names look like this; anything else is not ours (and not served). */
export const STORED_NAME = /^[0-9]+-[0-9a-f]{32}\.(png|jpg|gif|webp)$/;

export interface SavedImage {
  file: string;
  mimeType: string;
  size: number;
}

/** Detect the image type from its first bytes. */
export function sniffImage(head: Buffer): string | null {
  if (head.length >= 8 && head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (head.length >= 6 && (head.subarray(0, 6).toString('latin1') === 'GIF87a' || head.subarray(0, 6).toString('latin1') === 'GIF89a')) return 'image/gif';
  if (head.length >= 12 && head.subarray(0, 4).toString('latin1') === 'RIFF' && head.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  return null;
}

export async function receiveImage(ctx: RequestContext, dir: string, postId: number, maxBytes: number): Promise<SavedImage> {
  if (mediaType(ctx) !== 'multipart/form-data') {
    throw unsupportedMediaType(`unsupported media type "${mediaType(ctx) || 'none'}": send multipart/form-data with the image in a field named "file"`);
  }
  const declared = Number(ctx.req.headers['content-length']);
  // Multipart framing adds a little; refuse early only what cannot possibly fit.
  if (Number.isFinite(declared) && declared > maxBytes + 64 * 1024) {
    discardBody(ctx.req);
    throw payloadTooLarge(`image larger than ${maxBytes} bytes`);
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  let bb: Busboy.Busboy;
  try {
    bb = busboy()({ headers: ctx.req.headers, limits: { files: 1, fileSize: maxBytes, fields: 20, fieldSize: 4096, parts: 40 } });
  } catch (e) {
    discardBody(ctx.req);
    throw new HttpError(400, `bad multipart request: ${(e as Error).message}`);
  }

  const name = `${postId}-${randomBytes(16).toString('hex')}`;
  const tmp = join(dir, `.${name}.part`);
  return await new Promise<SavedImage>((resolve, reject) => {
    let failed: HttpError | null = null;
    let saving: Promise<SavedImage> | null = null;
    let out: ReturnType<typeof createWriteStream> | null = null;
    let settled = false;
    /**
     * Stop parsing and answer `err` at once; the rest of the body is read and thrown away (up to a
     * bound, then the connection is cut), so the client gets the answer and nothing more is stored.
     */
    const abandon = (err: HttpError) => {
      if (settled) return;
      settled = true;
      out?.destroy();
      ctx.req.unpipe(bb);
      bb.removeAllListeners('close');
      discardBody(ctx.req);
      rm(tmp, { force: true })
        .catch(() => undefined)
        .finally(() => reject(err));
    };
    const fail = (err: HttpError) => {
      if (!failed) failed = err;
    };

    bb.on('file', (field, stream, info) => {
      // Every stream busboy hands out can fail (a body that ends inside the file): an 'error'
      // nobody listens to would end the process.
      stream.on('error', (e: Error) => abandon(new HttpError(400, `bad multipart request: ${e.message}`)));
      if (!FILE_FIELDS.has(field) || saving) {
        stream.resume();
        if (!FILE_FIELDS.has(field)) fail(new HttpError(422, `unexpected file field "${field}": send the image in a field named "file"`));
        return;
      }
      const declaredType = (info.mimeType || '').toLowerCase();
      saving = new Promise<SavedImage>((res, rej) => {
        out = createWriteStream(tmp, { mode: 0o600 });
        let size = 0;
        let head = Buffer.alloc(0);
        stream.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (head.length < 16) head = Buffer.concat([head, chunk.subarray(0, 16 - head.length)]);
        });
        stream.on('limit', () => abandon(payloadTooLarge(`image larger than ${maxBytes} bytes`)));
        stream.pipe(out);
        out.on('error', (e) => rej(new HttpError(500, `saving the image: ${e.message}`)));
        out.on('finish', () => {
          if (failed) return rej(failed);
          if (size === 0) return rej(new HttpError(422, 'the uploaded file is empty'));
          const sniffed = sniffImage(head);
          if (!sniffed) return rej(unsupportedMediaType('the file is not a PNG, JPEG, GIF or WebP image'));
          if (declaredType && declaredType !== 'application/octet-stream' && IMAGE_TYPES[declaredType] === undefined) {
            return rej(unsupportedMediaType(`unsupported image type "${declaredType}" (png, jpeg, gif or webp)`));
          }
          res({ file: `${name}.${IMAGE_TYPES[sniffed]}`, mimeType: sniffed, size });
        });
      });
      saving.catch(() => undefined); // awaited on 'close'; never an unhandled rejection
    });
    bb.on('filesLimit', () => fail(new HttpError(422, 'send one image per request')));
    bb.on('partsLimit', () => abandon(new HttpError(422, 'too many parts in the multipart body')));
    bb.on('fieldsLimit', () => abandon(new HttpError(422, 'too many fields in the multipart body')));
    bb.on('error', (e) => abandon(new HttpError(400, `bad multipart request: ${(e as Error).message}`)));
    bb.on('close', () => {
      const done = async () => {
        if (!saving) throw failed ?? new HttpError(422, 'no image in the request: send it in a multipart field named "file"');
        const saved = await saving;
        if (failed) throw failed;
        await rename(tmp, join(dir, saved.file));
        return saved;
      };
      done().then(
        (saved) => {
          if (settled) return;
          settled = true;
          resolve(saved);
        },
        (e: unknown) => abandon(e instanceof HttpError ? e : new HttpError(500, (e as Error).message)),
      );
    });
    ctx.req.on('aborted', () => abandon(new HttpError(400, 'request aborted')));
    ctx.req.on('error', () => abandon(new HttpError(400, 'request aborted')));
    ctx.req.pipe(bb);
  });
}

