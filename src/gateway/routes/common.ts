/** Helpers shared by the gateway's management routes: body reading, key normalisation, views. */
import type { RequestContext } from '../../http/context.js';
import { readJson } from '../../http/body.js';
import { badRequest, HttpError } from '../../http/errors.js';
import { sendJson } from '../../http/respond.js';
import { describeErrors, type Validator } from '../../http/schema.js';
import type { ApiKeyRecord, ComboConfig, ComboMapping, ModelSpec, PriceEntry, ProviderConfig } from '../types.js';
import { MEDIA_PRICE_FIELDS } from '../types.js';
import { maskSecret } from '../validate.js';
import { keyUsable } from '../auth.js';
import { camelizeKeys } from '../case.js';
import { GatewayError } from '../errors.js';

export { camelCase, camelizeKeys } from '../case.js';

export const MANAGEMENT_BODY_LIMIT = 4 << 20;

/** Read a JSON object body (camelised). Empty body → `{}` when `allowEmpty`. */
export async function readObject(ctx: RequestContext, allowEmpty = false): Promise<Record<string, unknown>> {
  return camelizeKeys(await readPlainObject(ctx, allowEmpty)) as Record<string, unknown>;
}

/** Read a JSON object body as sent: for bodies that carry user data (metadata, JSON Schemas, inputs) whose keys must not change. */
export async function readPlainObject(ctx: RequestContext, allowEmpty = false): Promise<Record<string, unknown>> {
  const body = await readJson(ctx, { limit: MANAGEMENT_BODY_LIMIT });
  if (body === undefined) {
    if (allowEmpty) return {};
    throw badRequest('request body is empty; send a JSON object', { code: 'invalid_request' });
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('request body must be a JSON object');
  // Kept for the audit log of management changes.
  ctx.state.body = body;
  return body as Record<string, unknown>;
}

/** Validate with a compiled schema; 400 naming the first problem. */
export function validated<T>(validate: Validator<T>, value: unknown, root = 'body'): T {
  if (!validate(value)) throw badRequest(describeErrors(validate.errors, root), { code: 'invalid_request' });
  return value;
}

/** Turn an Error thrown by a validation helper into a 400. */
export function asBadRequest<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof HttpError || e instanceof GatewayError) throw e;
    throw badRequest((e as Error).message, { code: 'invalid_request' });
  }
}

export const iso = (ms: number | undefined): string | undefined => (ms === undefined ? undefined : new Date(ms).toISOString());

export function ok(ctx: RequestContext, body: unknown, status = 200): void {
  ctx.state.answer = body;
  sendJson(ctx.res, status, body);
}

const SECRET_HEADER = /auth|key|token|secret|cookie|password/i;

function maskHeaders(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) out[k] = SECRET_HEADER.test(k) ? maskSecret(v) : v;
  return out;
}

export function modelView(m: ModelSpec): Record<string, unknown> {
  return { ...m };
}

/** A provider as the API shows it: secrets masked. */
export function providerView(p: ProviderConfig, shadowed = false): Record<string, unknown> {
  return {
    id: p.id,
    kind: p.kind,
    name: p.name,
    baseUrl: p.baseUrl,
    enabled: p.enabled,
    priority: p.priority,
    headers: maskHeaders(p.headers),
    ...(p.timeoutMs !== undefined ? { timeoutMs: p.timeoutMs } : {}),
    accounts: p.accounts.map((a) => ({
      id: a.id,
      name: a.name,
      apiKey: maskSecret(a.apiKey),
      enabled: a.enabled,
      priority: a.priority,
    })),
    models: p.models.map(modelView),
    source: p.source,
    ...(shadowed ? { shadowedByFile: true } : {}),
    createdAt: iso(p.createdAt),
    updatedAt: iso(p.updatedAt),
  };
}

export function comboView(c: ComboConfig): Record<string, unknown> {
  return {
    id: c.id,
    name: c.name,
    strategy: c.strategy,
    targets: c.targets,
    enabled: c.enabled,
    ...(c.description !== undefined ? { description: c.description } : {}),
    ...(c.maxAttempts !== undefined ? { maxAttempts: c.maxAttempts } : {}),
    ...(c.rules ? { rules: c.rules } : {}),
    ...(c.sla ? { sla: c.sla } : {}),
    source: c.source,
    createdAt: iso(c.createdAt),
    updatedAt: iso(c.updatedAt),
  };
}

export function mappingView(m: ComboMapping, comboName?: string): Record<string, unknown> {
  return {
    id: m.id,
    pattern: m.pattern,
    comboId: m.comboId,
    ...(comboName !== undefined ? { comboName } : {}),
    priority: m.priority,
    enabled: m.enabled,
    ...(m.description !== undefined ? { description: m.description } : {}),
    source: m.source,
    createdAt: iso(m.createdAt),
    updatedAt: iso(m.updatedAt),
  };
}

export function keyView(k: ApiKeyRecord, now: number): Record<string, unknown> {
  const status = k.revokedAt !== undefined ? 'revoked' : !k.enabled ? 'disabled' : k.expiresAt !== undefined && k.expiresAt <= now ? 'expired' : 'active';
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    models: k.models,
    scopes: k.scopes,
    enabled: k.enabled,
    status,
    usable: keyUsable(k, now),
    source: k.source,
    createdAt: iso(k.createdAt),
    ...(k.expiresAt !== undefined ? { expiresAt: iso(k.expiresAt) } : {}),
    ...(k.revokedAt !== undefined ? { revokedAt: iso(k.revokedAt) } : {}),
    ...(k.lastUsedAt !== undefined ? { lastUsedAt: iso(k.lastUsedAt) } : {}),
    ...(k.rpm !== undefined ? { rpm: k.rpm } : {}),
  };
}

export function priceView(p: PriceEntry): Record<string, unknown> {
  const media: Record<string, unknown> = {};
  for (const k of MEDIA_PRICE_FIELDS) if (p[k] !== undefined) media[k] = p[k];
  return { model: p.model, input: p.input ?? null, output: p.output ?? null, cached: p.cached ?? null, ...media, source: p.source };
}

/** Integer query parameter within bounds; 400 otherwise. */
export function intQuery(ctx: RequestContext, name: string, def: number, min: number, max: number): number {
  const v = ctx.query.get(name);
  if (v === null || v === '') return def;
  if (!/^-?\d+$/.test(v)) throw badRequest(`query parameter ${name} must be an integer`);
  const n = Number(v);
  if (n < min || n > max) throw badRequest(`query parameter ${name} must be between ${min} and ${max}`);
  return n;
}

/** Paging by `page`/`limit` or `offset`/`limit`: the limit, the offset, and the page the offset falls on. */
export function pageQuery(ctx: RequestContext, def = 50, max = 500): { limit: number; offset: number; page: number } {
  const limit = intQuery(ctx, 'limit', def, 1, max);
  const page = ctx.query.has('page') ? intQuery(ctx, 'page', 1, 1, 1_000_000) : undefined;
  const offset = page !== undefined ? (page - 1) * limit : intQuery(ctx, 'offset', 0, 0, 1_000_000_000);
  return { limit, offset, page: page ?? Math.floor(offset / limit) + 1 };
}

/** Time query parameter: ISO date/time or epoch milliseconds. */
export function timeQuery(ctx: RequestContext, name: string): number | undefined {
  const v = ctx.query.get(name);
  if (v === null || v === '') return undefined;
  const n = /^\d+$/.test(v) ? Number(v) : Date.parse(v);
  if (!Number.isFinite(n)) throw badRequest(`query parameter ${name} must be an ISO time or epoch milliseconds`);
  return n;
}

/** A yes/no query parameter: `1`, `true` or `yes` (any case) is yes; anything else, or none, no. */
export function flagQuery(ctx: RequestContext, name: string): boolean {
  return /^(1|true|yes)$/i.test(ctx.query.get(name) ?? '');
}

/** Latest expiry accepted: the end of year 9999 (a four-digit ISO year, as every client can parse). */
const MAX_TIME_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** An `expiresAt` of a body (ISO time or epoch milliseconds; null and undefined: none), or a 400. */
export function expiryOf(v: string | number | null | undefined): number | undefined {
  if (v === undefined || v === null) return undefined;
  const t = typeof v === 'number' ? v : Date.parse(v);
  if (!Number.isFinite(t) || t < 0 || t > MAX_TIME_MS) throw badRequest('expiresAt must be an ISO time or epoch milliseconds between 1970 and 9999');
  return t;
}

/** The gateway's address as this request reached it (its Host header over TCP); null over the control socket. */
export function requestOrigin(ctx: RequestContext): string | null {
  if (ctx.viaSocket) return null;
  const host = ctx.req.headers.host;
  if (!host) return null;
  return `${(ctx.req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http'}://${host}`;
}
