/**
 * Request bodies of POST /silences and POST /alerts, decoded and validated in go-openapi's order:
 * media type (415), JSON syntax and Go types (400 `{code:400}`), then the OpenAPI schema (422
 * `{code:602|612|601}`); only the first problem is reported, as Alertmanager does.
 */
import type { RequestContext } from '../../http/context.js';
import { HttpError } from '../../http/errors.js';
import { readBody } from '../../http/body.js';
import { checkGoJson, decodeFirst, EMPTY, getField, GoJsonError, type GoType } from './gojson.js';
import { isWellFormed, wellFormed } from './json.js';
import { GO_ZERO_MS, goQuote, parseDateTime, parseRfc3339Fast, postedOffset, subMilliNanos } from '../timefmt.js';
import type { ApiMatcher, SilenceInput } from '../silences.js';

/** `{code, message}` framework errors (no trailing newline). */
export function frameworkError(status: number, code: number, message: string): HttpError {
  return new HttpError(status, message, { code, details: { framework: true } });
}

export function checkJsonContentType(ctx: RequestContext): void {
  const ct = ctx.req.headers['content-type'];
  if (ct === undefined || ct === '') return;
  const type = ct.split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') {
    throw frameworkError(415, 415, `unsupported media type ${goQuote(type)}, only [application/json] are allowed`);
  }
}

const LABEL_SET: GoType = { k: 'map', go: 'models.LabelSet', of: { k: 'string' } };
const DATETIME: GoType = { k: 'datetime' };

const SILENCE_ID_PASS: GoType = {
  k: 'struct',
  go: 'struct { ID string "json:\\"id,omitempty\\"" }',
  name: '',
  fields: { id: { k: 'string' } },
};

const MATCHER: GoType = {
  k: 'struct',
  go: 'models.Matcher',
  name: 'Matcher',
  fields: { isEqual: { k: 'bool' }, isRegex: { k: 'bool' }, name: { k: 'string' }, value: { k: 'string' } },
};

const SILENCE_PASS: GoType = {
  k: 'struct',
  go: 'models.Silence',
  name: 'Silence',
  fields: {
    comment: { k: 'string' },
    createdBy: { k: 'string' },
    endsAt: DATETIME,
    matchers: { k: 'slice', go: 'models.Matchers', of: MATCHER },
    startsAt: DATETIME,
  },
};

const ALERT_TIMES_PASS: GoType = {
  k: 'struct',
  go: 'struct { Annotations models.LabelSet "json:\\"annotations,omitempty\\""; EndsAt strfmt.DateTime "json:\\"endsAt,omitempty\\""; StartsAt strfmt.DateTime "json:\\"startsAt,omitempty\\"" }',
  name: '',
  fields: { annotations: LABEL_SET, endsAt: DATETIME, startsAt: DATETIME },
};

const ALERT_PASS: GoType = {
  k: 'struct',
  go: 'models.Alert',
  name: 'Alert',
  fields: { generatorURL: { k: 'string' }, labels: LABEL_SET },
};

function decodeBodyValue(buf: Buffer, what: string): unknown {
  try {
    const v = decodeFirst(buf);
    if (v === EMPTY) throw frameworkError(422, 602, `${what} in body is required`);
    return v;
  } catch (e) {
    if (e instanceof GoJsonError) throw parseFailure(what, e.message);
    throw e;
  }
}

function parseFailure(what: string, reason: string): HttpError {
  return frameworkError(400, 400, `parsing ${what} body from "" failed, because ${reason}`);
}

function required(path: string): HttpError {
  return frameworkError(422, 602, `${path} in body is required`);
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function toLabelSet(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isObj(v)) return out;
  for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[wellFormed(k)] = wellFormed(x);
  return out;
}

/** A date-time that is absent, null or Go's zero time is "unset". */
function optionalTime(v: unknown): number | undefined {
  if (typeof v !== 'string') return undefined;
  const ms = parseDateTime(v);
  return ms === GO_ZERO_MS ? undefined : ms;
}

const SILENCE_KEYS = new Set(['id', 'matchers', 'startsAt', 'endsAt', 'createdBy', 'comment']);
const SILENCE_KEYS_LOWER = new Set([...SILENCE_KEYS].map((k) => k.toLowerCase()));
const MATCHER_KEYS = new Set(['name', 'value', 'isRegex', 'isEqual']);
const MATCHER_KEYS_LOWER = new Set([...MATCHER_KEYS].map((k) => k.toLowerCase()));

/** No key that Go would match to one of `known` case-insensitively without being spelt exactly so. */
function exactKeys(o: Record<string, unknown>, known: Set<string>, lower: Set<string>): boolean {
  for (const k in o) if (!known.has(k) && lower.has(k.toLowerCase())) return false;
  return true;
}

/**
 * The common, well-formed silence (exact field names, strings where strings go, booleans for the
 * matchers' flags, RFC3339 times, at least one matcher) read in one pass; undefined for anything
 * else, which takes the path that reproduces go-openapi's checks and errors in their order.
 * Nothing it accepts would fail those checks, and it reads the same values they do.
 */
function plainSilence(v: unknown, checkStrings: boolean): SilenceInput | undefined {
  if (!isObj(v) || !exactKeys(v, SILENCE_KEYS, SILENCE_KEYS_LOWER)) return undefined;
  const { id, comment, createdBy, startsAt, endsAt, matchers } = v;
  if (id != null && typeof id !== 'string') return undefined;
  if (typeof comment !== 'string' || typeof createdBy !== 'string' || typeof startsAt !== 'string' || typeof endsAt !== 'string') return undefined;
  if (checkStrings && (!isWellFormed(comment) || !isWellFormed(createdBy))) return undefined;
  if (!Array.isArray(matchers) || matchers.length === 0) return undefined;
  const start = parseRfc3339Fast(startsAt);
  const end = parseRfc3339Fast(endsAt);
  if (start === undefined || end === undefined) return undefined;
  const parsed: ApiMatcher[] = [];
  for (let i = 0; i < matchers.length; i++) {
    const m: unknown = matchers[i];
    if (!isObj(m) || !exactKeys(m, MATCHER_KEYS, MATCHER_KEYS_LOWER)) return undefined;
    const { name, value, isRegex, isEqual } = m;
    if (typeof name !== 'string' || typeof value !== 'string' || typeof isRegex !== 'boolean' || (isEqual != null && typeof isEqual !== 'boolean')) return undefined;
    if (checkStrings && (!isWellFormed(name) || !isWellFormed(value))) return undefined;
    parsed.push({ name, value, isRegex, isEqual: isEqual == null ? true : isEqual });
  }
  return { id: typeof id === 'string' && id !== '' ? id : undefined, matchers: parsed, startsAt: start, endsAt: end, createdBy, comment };
}

export async function readPostableSilence(ctx: RequestContext): Promise<SilenceInput> {
  checkJsonContentType(ctx);
  const buf = await readBody(ctx, 1 << 20);
  const v = decodeBodyValue(buf, 'silence');
  // Only a \u escape can give JSON.parse a lone surrogate (see decodePostableAlerts).
  const plain = plainSilence(v, buf.includes(BACKSLASH_U));
  if (plain) return plain;
  const e1 = checkGoJson(v, SILENCE_ID_PASS) ?? checkGoJson(v, SILENCE_PASS);
  if (e1) throw parseFailure('silence', e1);
  const body = isObj(v) ? v : {};
  const f = (name: string) => getField(body, SILENCE_PASS as { fields: Record<string, unknown> }, name);
  const comment = f('comment');
  const createdBy = f('createdBy');
  const endsAt = f('endsAt');
  const matchers = f('matchers');
  const startsAt = f('startsAt');
  if (comment == null) throw required('comment');
  if (createdBy == null) throw required('createdBy');
  if (endsAt == null) throw required('endsAt');
  if (matchers == null) throw required('matchers');
  const list = matchers as unknown[];
  if (list.length < 1) throw frameworkError(422, 612, 'matchers in body should have at least 1 items');
  const parsed: ApiMatcher[] = [];
  list.forEach((m, i) => {
    if (!isObj(m)) throw required(`matchers.${i}`);
    const g = (name: string) => getField(m, MATCHER as { fields: Record<string, unknown> }, name);
    const isRegex = g('isRegex');
    const name = g('name');
    const value = g('value');
    if (isRegex == null) throw required(`matchers.${i}.isRegex`);
    if (name == null) throw required(`matchers.${i}.name`);
    if (value == null) throw required(`matchers.${i}.value`);
    const isEqual = g('isEqual');
    parsed.push({ name: wellFormed(name as string), value: wellFormed(value as string), isRegex: isRegex as boolean, isEqual: isEqual == null ? true : (isEqual as boolean) });
  });
  if (startsAt == null) throw required('startsAt');
  const id = getField(body, SILENCE_ID_PASS as { fields: Record<string, unknown> }, 'id');
  return {
    id: typeof id === 'string' && id !== '' ? id : undefined,
    matchers: parsed,
    startsAt: parseDateTime(startsAt as string),
    endsAt: parseDateTime(endsAt as string),
    createdBy: wellFormed(createdBy as string),
    comment: wellFormed(comment as string),
  };
}

export interface PostableAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt?: number;
  endsAt?: number;
  /** Nanoseconds past the millisecond of startsAt / endsAt (0-999999; timefmt.subMilliNanos). */
  startsAtNs?: number;
  endsAtNs?: number;
  /** The zone offset startsAt / endsAt were written with (timefmt.postedOffset); absent for Z. */
  startsAtOff?: number;
  endsAtOff?: number;
  generatorURL: string;
}

export interface DecodedAlerts {
  alerts: PostableAlert[];
  /** Every element was a plain alert (decoded in one pass, no Go-compatibility corner). */
  plain: boolean;
}

/** A body over `maxBytes` is refused with 400, as every other bad alert batch is. */
export async function readPostableAlerts(ctx: RequestContext, maxBytes: number): Promise<DecodedAlerts> {
  checkJsonContentType(ctx);
  let body: Buffer;
  try {
    body = await readBody(ctx, maxBytes);
  } catch (e) {
    if (e instanceof HttpError && e.status === 413) throw parseFailure('alerts', `the body is larger than ${maxBytes} bytes (max-batch-bytes)`);
    throw e;
  }
  return decodePostableAlerts(body);
}

/** The body of POST /alerts, decoded and checked (throws the framework errors of readPostableAlerts). */
export function decodePostableAlerts(buf: Buffer): DecodedAlerts {
  const v = decodeBodyValue(buf, 'alerts');
  if (v === null) return { alerts: [], plain: false };
  if (!Array.isArray(v)) throw parseFailure('alerts', `json: cannot unmarshal ${kindOf(v)} into Go value of type models.PostableAlerts`);
  const fast: PostableAlert[] = [];
  // Only a \u escape can give JSON.parse a lone surrogate: the text itself was decoded from UTF-8,
  // which has none (invalid bytes became U+FFFD). Without one, no string needs the check.
  const checkStrings = buf.includes(BACKSLASH_U);
  // The time memo is per batch: its first alert always parses, so the parse stays a warm path.
  lastTimeText = undefined;
  for (const el of v) {
    const p = plainAlert(el, checkStrings);
    if (!p) break;
    fast.push(p);
  }
  if (fast.length === v.length) return { alerts: fast, plain: true };
  for (const el of v) {
    if (el === null) continue;
    const err = checkGoJson(el, ALERT_TIMES_PASS) ?? checkGoJson(el, ALERT_PASS);
    if (err) throw parseFailure('alerts', err);
  }
  const out: PostableAlert[] = [];
  v.forEach((el, i) => {
    if (!isObj(el)) throw required(`${i}.labels`);
    const g = (t: GoType, name: string) => getField(el, t as { fields: Record<string, unknown> }, name);
    const generatorURL = (g(ALERT_PASS, 'generatorURL') as string | null | undefined) ?? '';
    if (generatorURL !== '' && !isRequestUri(generatorURL)) {
      throw frameworkError(422, 601, `${i}.generatorURL in body must be of type uri: ${goQuote(generatorURL)}`);
    }
    const labels = g(ALERT_PASS, 'labels');
    if (labels == null) throw required(`${i}.labels`);
    const startsAt = optionalTime(g(ALERT_TIMES_PASS, 'startsAt'));
    const endsAt = optionalTime(g(ALERT_TIMES_PASS, 'endsAt'));
    out.push({
      labels: toLabelSet(labels),
      annotations: toLabelSet(g(ALERT_TIMES_PASS, 'annotations')),
      startsAt,
      endsAt,
      startsAtNs: startsAt === undefined ? 0 : subMilliNanos(g(ALERT_TIMES_PASS, 'startsAt') as string),
      endsAtNs: endsAt === undefined ? 0 : subMilliNanos(g(ALERT_TIMES_PASS, 'endsAt') as string),
      startsAtOff: startsAt === undefined ? undefined : zoneOf(g(ALERT_TIMES_PASS, 'startsAt')),
      endsAtOff: endsAt === undefined ? undefined : zoneOf(g(ALERT_TIMES_PASS, 'endsAt')),
      generatorURL: wellFormed(generatorURL),
    });
  });
  return { alerts: out, plain: false };
}

const ALERT_KEYS = new Set(['labels', 'annotations', 'startsAt', 'endsAt', 'generatorURL']);
const ALERT_KEYS_LOWER = new Set([...ALERT_KEYS].map((k) => k.toLowerCase()));
const RFC3339_SHAPE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;
const NO_LABELS: Record<string, string> = Object.freeze({}) as Record<string, string>;
const BACKSLASH_U = Buffer.from('\\u');

/**
 * A string map as a label set: the parsed object itself when every name and value is a
 * well-formed string (the common case: no copy), else undefined (the slow path decides).
 */
function plainStringMap(v: unknown, checkStrings: boolean): Record<string, string> | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const m = v as Record<string, unknown>;
  for (const k in m) {
    const x = m[k];
    if (typeof x !== 'string' || k === '__proto__' || (checkStrings && (!isWellFormed(x) || !isWellFormed(k)))) return undefined;
  }
  return m as Record<string, string>;
}

/** The zone offset of a posted time: only read when the text does not end in Z (the common case). */
function zoneOf(t: unknown): number | undefined {
  return typeof t === 'string' && t.charCodeAt(t.length - 1) !== 0x5a ? postedOffset(t) : undefined;
}

/** The last time text plainTime read in this batch and what it read: a batch's alerts usually share their times. */
let lastTimeText: string | undefined;
let lastTime: number | undefined;
let lastTimeNs = 0;
/** The nanoseconds past the millisecond of the time plainTime last returned (0 without one). */
let plainNs = 0;

/** An RFC3339 time as epoch ms; undefined when absent or Go's zero time; NaN when not plain. Sets plainNs. */
function plainTime(t: unknown): number | undefined {
  plainNs = 0;
  if (t == null) return undefined;
  if (typeof t !== 'string') return NaN;
  if (t === lastTimeText) {
    plainNs = lastTimeNs;
    return lastTime;
  }
  const ms = plainTimeText(t);
  lastTimeText = t;
  lastTime = ms;
  lastTimeNs = ms === undefined || Number.isNaN(ms) ? 0 : subMilliNanos(t);
  plainNs = lastTimeNs;
  return ms;
}

function plainTimeText(t: string): number | undefined {
  const fast = parseRfc3339Fast(t);
  if (fast !== undefined) return fast === GO_ZERO_MS ? undefined : fast;
  if (!RFC3339_SHAPE.test(t)) return NaN;
  let ms: number;
  try {
    ms = parseDateTime(t);
  } catch {
    return NaN;
  }
  return ms === GO_ZERO_MS ? undefined : ms;
}

/**
 * The common, well-formed alert (exact field names, string maps, RFC3339 times, a valid
 * generatorURL) decoded in one pass; undefined for anything else, which takes the slow path that
 * reproduces Go's exact error.
 */
function plainAlert(el: unknown, checkStrings: boolean): PostableAlert | undefined {
  if (typeof el !== 'object' || el === null || Array.isArray(el)) return undefined;
  const a = el as Record<string, unknown>;
  for (const k in a) if (!ALERT_KEYS.has(k) && ALERT_KEYS_LOWER.has(k.toLowerCase())) return undefined;
  const labels = plainStringMap(a.labels, checkStrings);
  if (!labels) return undefined;
  const annotations = a.annotations == null ? NO_LABELS : plainStringMap(a.annotations, checkStrings);
  if (!annotations) return undefined;
  const startsAt = plainTime(a.startsAt);
  const startsAtNs = plainNs;
  const endsAt = plainTime(a.endsAt);
  const endsAtNs = plainNs;
  if (Number.isNaN(startsAt) || Number.isNaN(endsAt)) return undefined;
  const url = a.generatorURL;
  let generatorURL = '';
  if (url != null) {
    if (typeof url !== 'string' || (url !== '' && !isRequestUri(url)) || (checkStrings && !isWellFormed(url))) return undefined;
    generatorURL = url;
  }
  return {
    labels,
    annotations,
    startsAt,
    endsAt,
    startsAtNs,
    endsAtNs,
    startsAtOff: startsAt === undefined ? undefined : zoneOf(a.startsAt),
    endsAtOff: endsAt === undefined ? undefined : zoneOf(a.endsAt),
    generatorURL,
  };
}

function kindOf(v: unknown): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'boolean') return 'bool';
  if (Array.isArray(v)) return 'array';
  return 'object';
}

/** strfmt "uri" = Go url.ParseRequestURI succeeds: an absolute URI or an absolute path. */
export function isRequestUri(s: string): boolean {
  if (s === '' || /[\x00-\x1f\x7f]/.test(s)) return false;
  if (s === '*') return true;
  let rest = s;
  let scheme = '';
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(s);
  if (m) {
    scheme = m[1]!;
    rest = s.slice(m[0].length);
  } else if (s.startsWith(':')) return false;
  const q = rest.indexOf('?');
  if (q >= 0) rest = rest.slice(0, q);
  if (!rest.startsWith('/')) return scheme !== '';
  if (scheme !== '' && rest.startsWith('//')) {
    const slash = rest.indexOf('/', 2);
    const authority = slash < 0 ? rest.slice(2) : rest.slice(2, slash);
    rest = slash < 0 ? '' : rest.slice(slash);
    const at = authority.lastIndexOf('@');
    const host = at >= 0 ? authority.slice(at + 1) : authority;
    const user = at >= 0 ? authority.slice(0, at) : '';
    if (!/^[A-Za-z0-9\-._~!$&'()*+,;=:%]*$/.test(user)) return false;
    if (host.startsWith('[')) {
      if (!/^\[[0-9A-Fa-f:.%a-zA-Z0-9]*\](:\d*)?$/.test(host)) return false;
    } else if (!/^[A-Za-z0-9\-._~!$&'()*+,;=%]*(:\d*)?$/.test(host)) return false;
    if (/%(?![0-9A-Fa-f]{2})/.test(host)) return false;
  }
  return !/%(?![0-9A-Fa-f]{2})/.test(rest);
}
