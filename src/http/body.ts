import type { RequestContext } from './context.js';
import { HttpError, badRequest, payloadTooLarge, unsupportedMediaType } from './errors.js';
import { MAX_JSON_DEPTH, jsonDeeperThan } from './json-depth.js';
import { discardBody, releaseBodyBytes, takeBodyBytes } from './body-budget.js';
import { JsonPiecesError, decodeInPieces, parseInPieces } from './json-pieces.js';

/** Default request body limit: generous for JSON APIs, small enough to bound memory. */
export const DEFAULT_BODY_LIMIT = 1 << 20; // 1 MiB

/**
 * Read the whole body into memory, refusing more than `limit` bytes with 413 as soon as the
 * limit is crossed, chunked bodies too (the rest of the upload is not buffered). Every byte held
 * counts against the daemon-wide body budget until the answer is sent: past it, 503.
 */
export async function readBody(ctx: RequestContext, limit = DEFAULT_BODY_LIMIT): Promise<Buffer> {
  if (ctx.rawBody) return ctx.rawBody;
  const { req } = ctx;
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    discardBody(req);
    throw payloadTooLarge(`request body larger than ${limit} bytes`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  // What this request holds of the budget is given back once its answer is done (or it is cut).
  // `on`, not `once`, here and below: each of these events comes at most once per request, and
  // `once` allocates a wrapper at one allocation site shared by every `once` in the process, which
  // V8 pretenures (allocates in the old generation) once it has seen long-lived wrappers there; an
  // old wrapper keeps the request's whole object graph (request, response, headers, body) through
  // every young collection until the next full one (measured: docs/gateway.md, Performance notes).
  ctx.res?.on('close', () => releaseBodyBytes(size));
  await new Promise<void>((resolve, reject) => {
    const refuse = (err: HttpError) => {
      req.off('data', onData);
      releaseBodyBytes(size);
      size = 0;
      chunks.length = 0;
      discardBody(req);
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      if (size + chunk.length > limit) return refuse(payloadTooLarge(`request body larger than ${limit} bytes`));
      if (!takeBodyBytes(chunk.length)) {
        return refuse(new HttpError(503, 'too many large request bodies at once; retry shortly', { headers: { 'Retry-After': '1' } }));
      }
      size += chunk.length;
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => resolve());
    req.on('error', (e) => reject(new HttpError(400, `reading request body: ${e.message}`)));
    req.on('aborted', () => reject(new HttpError(400, 'request aborted')));
  });
  // One chunk (the usual case for bodies up to the socket read size) is used as it is.
  ctx.rawBody = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
  return ctx.rawBody;
}

/** The media type of the request without parameters, lower-cased; '' when absent. */
export function mediaType(ctx: RequestContext): string {
  const ct = ctx.req.headers['content-type'];
  if (!ct) return '';
  if (ct === 'application/json') return ct; // the usual value, already in its normal form
  return ct.split(';')[0]!.trim().toLowerCase();
}

export interface ReadJsonOptions {
  limit?: number;
  /** Accept a missing Content-Type (default true; curl -d sends form type, so many APIs also allow it). */
  allowMissingType?: boolean;
  /** Media types accepted besides application/json (e.g. application/x-www-form-urlencoded for lenient APIs). */
  alsoAccept?: string[];
  /** When false the content type is not checked at all. */
  checkType?: boolean;
}

/**
 * Read and parse a JSON body. Empty body → undefined. Invalid JSON → 400 with the parser's reason.
 * Wrong content type → 415.
 */
export async function readJson(ctx: RequestContext, opts: ReadJsonOptions = {}): Promise<unknown> {
  const { limit = DEFAULT_BODY_LIMIT, allowMissingType = true, alsoAccept = [], checkType = true } = opts;
  if (checkType) {
    const type = mediaType(ctx);
    const ok =
      type === 'application/json' || type.endsWith('+json') || (type === '' && allowMissingType) || alsoAccept.includes(type);
    if (!ok) throw unsupportedMediaType(`unsupported media type "${type}", only [application/json] are allowed`);
  }
  const buf = await readBody(ctx, limit);
  if (buf.length === 0) return undefined;
  return parseJsonBody(buf);
}

/**
 * Bodies past this many bytes are decoded and parsed in pieces that give the event loop back (a
 * few milliseconds each): decoding, the depth scan and JSON.parse of a 2 MB chat took 10-20 ms in
 * one go, of 30 MB of small objects several hundred; smaller bodies parse faster than a yield.
 */
export const PARSE_IN_PIECES_BYTES = 256 * 1024;

/** A JSON body as parseJson reads it; one past PARSE_IN_PIECES_BYTES without holding the loop. */
export async function parseJsonBody(buf: Buffer): Promise<unknown> {
  if (buf.length <= PARSE_IN_PIECES_BYTES) return parseJson(buf.toString('utf8'));
  try {
    return await parseInPieces(await decodeInPieces(buf), MAX_JSON_DEPTH);
  } catch (e) {
    if (e instanceof JsonPiecesError) throw badRequest(`invalid JSON: ${e.message}`, { code: 'invalid_json', cause: e });
    throw e;
  }
}

/** An exponent of three digits or more, or 309 digits in a row: what can overflow a double. */
const MAY_OVERFLOW = /[eE][+]?0*[1-9]\d{2}|\d{309}/;

function finiteNumbers(_key: string, value: unknown): unknown {
  if (typeof value === 'number' && !Number.isFinite(value)) throw new RangeError('a number is out of range');
  return value;
}

/** JSON.parse that throws a 400 HttpError carrying the reason (and refuses nesting past MAX_JSON_DEPTH). */
export function parseJson(text: string): unknown {
  if (jsonDeeperThan(text, MAX_JSON_DEPTH)) {
    throw badRequest(`invalid JSON: nested deeper than ${MAX_JSON_DEPTH} levels`, { code: 'invalid_json' });
  }
  try {
    // A literal past the double range (1e400) parses as Infinity and is stored as null; only texts
    // that could hold one pay for the reviver that refuses it.
    return MAY_OVERFLOW.test(text) ? JSON.parse(text, finiteNumbers) : JSON.parse(text);
  } catch (e) {
    throw badRequest(`invalid JSON: ${(e as Error).message}`, { code: 'invalid_json', cause: e });
  }
}
