import type { RequestContext } from '../http/context.js';
import { mediaType, readBody } from '../http/body.js';
import { unsupportedMediaType } from '../http/errors.js';
import { MAX_JSON_DEPTH, jsonDeeperThan } from '../http/json-depth.js';
import { Code } from './codes.js';
import { ReplyError } from './envelope.js';
import { isPlainObject } from './values.js';

export interface Envelope {
  method: string;
  value: Record<string, unknown>;
  form: boolean;
}

/**
 * Decode a POST body into `{Method, Value}`. JSON is decoded strictly (any top-level key besides
 * Method and Value, a non-object Value, or trailing data → 1003); form-encoded fields (and, as with
 * Go's ParseForm, the query string) become `Value` keys as strings. A body without a Content-Type, or
 * with the form type (what `curl -d` sends), is read as JSON when it starts with `{`, else as a form. `pathMethod` (POST /api/{method}) overrides
 * the body's Method. Errors: 1000 missing or malformed Method, 1001 unknown Method, 1003 bad JSON.
 */
export async function decodeEnvelope(
  ctx: RequestContext,
  limit: number,
  pathMethod: string | undefined,
  isMethod: (m: string) => boolean,
): Promise<Envelope> {
  if (pathMethod !== undefined && !isMethod(pathMethod)) throw new ReplyError(Code.METHOD_NOT_FOUND);
  const type = mediaType(ctx);
  const body = (await readBody(ctx, limit)).toString('utf8');
  // `curl -d '{"Method":...}'` sends the form type: a body that starts with `{` is read as JSON then
  // too (no form field name starts with `{`), so the documented one-liner works as typed.
  const looksJson = body.trimStart().startsWith('{');
  const asJson = type === 'application/json' || type.endsWith('+json') || ((type === '' || type === 'application/x-www-form-urlencoded') && looksJson);
  const isForm = !asJson && (type === 'application/x-www-form-urlencoded' || type === '');
  if (!asJson && !isForm) {
    throw unsupportedMediaType(`unsupported content type "${type}": use application/json or application/x-www-form-urlencoded`);
  }
  let method: unknown;
  let value: Record<string, unknown>;
  if (asJson) {
    let parsed: unknown;
    if (jsonDeeperThan(body, MAX_JSON_DEPTH)) throw new ReplyError(Code.BAD_JSON);
    try {
      parsed = JSON.parse(body);
    } catch {
      throw new ReplyError(Code.BAD_JSON);
    }
    if (!isPlainObject(parsed)) throw new ReplyError(Code.BAD_JSON);
    for (const key of Object.keys(parsed)) if (key !== 'Method' && key !== 'Value') throw new ReplyError(Code.BAD_JSON);
    if (parsed.Value !== undefined && parsed.Value !== null && !isPlainObject(parsed.Value)) throw new ReplyError(Code.BAD_JSON);
    method = parsed.Method;
    value = (parsed.Value as Record<string, unknown> | undefined) ?? {};
  } else {
    value = {};
    // Body fields take precedence over query fields; the first value of a repeated key wins.
    for (const source of [new URLSearchParams(body), ctx.query]) {
      for (const [k, v] of source) if (!Object.hasOwn(value, k)) value[k] = v;
    }
    method = value.Method;
    delete value.Method;
  }
  if (pathMethod !== undefined) return { method: pathMethod, value, form: !asJson };
  if (typeof method !== 'string' || method === '') throw new ReplyError(Code.BAD_METHOD);
  if (!isMethod(method)) throw new ReplyError(Code.METHOD_NOT_FOUND);
  return { method, value, form: !asJson };
}
