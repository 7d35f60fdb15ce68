/**
 * Gateway authentication.
 *  - Inference routes: an API key from `Authorization: Bearer`, `x-api-key`, `x-goog-api-key`, the
 *    query parameters `token`, `apiKey`, `api_key`, `key`, or the editor route's `{token}`. Required
 *    when REQUIRE_API_KEY is true, or when it is unset and any key exists; otherwise any key is
 *    accepted, and a known key still has its model allow-list applied and its usage attributed. The
 *    control socket is trusted (file permissions).
 *  - Management routes: the control socket, the `auth_token` cookie from POST /api/auth/login, or an
 *    API key with the `management` scope. 401 otherwise.
 */
import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import type { RequestContext } from '../http/context.js';
import { HttpError } from '../http/errors.js';
import type { Clock } from '../http/clock.js';
import type { Catalog } from './catalog.js';
import { sha256Hex } from './config-file.js';
import type { GatewayStore } from './store.js';
import type { ApiKeyRecord, KeyScope } from './types.js';

const scrypt = promisify(scryptCb) as (password: string, salt: Buffer, keylen: number) => Promise<Buffer>;

export const AUTH_COOKIE = 'auth_token';
/** Login session lifetime. */
export const SESSION_TTL_MS = 24 * 3600 * 1000;
const QUERY_KEY_PARAMS = ['token', 'apiKey', 'api_key', 'key'] as const;

/**
 * Set on an in-process request (a batch line) by the code that makes it: the principal it runs as.
 * A symbol property, so nothing arriving over a socket can carry it.
 */
export const INTERNAL_PRINCIPAL: unique symbol = Symbol('ctl.gateway.internal-principal');

/** Who is calling an inference route. */
export interface Principal {
  /** The matched key, when the caller presented a known, usable key. */
  key?: ApiKeyRecord;
  /** True over the control socket. */
  trusted: boolean;
}

/** The raw key a request presents, if any. */
export function presentedKey(ctx: RequestContext): string | undefined {
  const h = ctx.req.headers;
  const auth = h.authorization;
  if (typeof auth === 'string') {
    const plain = plainBearer(auth);
    if (plain !== undefined) return plain;
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (m) return m[1];
  }
  for (const name of ['x-api-key', 'x-goog-api-key'] as const) {
    const v = h[name];
    if (typeof v === 'string' && v.trim()) return v.trim();
  }
  if (ctx.params.token) return ctx.params.token;
  if (ctx.url.search) {
    for (const p of QUERY_KEY_PARAMS) {
      const v = ctx.query.get(p);
      if (v) return v;
    }
  }
  return undefined;
}

/**
 * The usual `Bearer <token>` (one space, printable ASCII token) without the regular expression;
 * undefined for anything else, which the expression then decides.
 */
function plainBearer(auth: string): string | undefined {
  if (auth.length < 8 || !auth.startsWith('Bearer ')) return undefined;
  for (let i = 7; i < auth.length; i++) {
    const c = auth.charCodeAt(i);
    if (c <= 0x20 || c >= 0x7f) return undefined;
  }
  return auth.slice(7);
}

/** Usable right now: enabled, not revoked, not expired. */
export function keyUsable(k: ApiKeyRecord, now: number): boolean {
  return k.enabled && k.revokedAt === undefined && (k.expiresAt === undefined || k.expiresAt > now);
}

/** Glob match of a model id against a key's allow-list (`*`, `local/*`, exact). */
export function modelAllowed(allow: readonly string[], model: string): boolean {
  for (const pattern of allow) {
    if (pattern === '*' || pattern === model) return true;
    if (pattern.includes('*') && globMatch(pattern, model)) return true;
  }
  return false;
}

function globMatch(pattern: string, text: string): boolean {
  // Linear-time wildcard match (no regex on user input).
  let p = 0;
  let t = 0;
  let star = -1;
  let mark = 0;
  while (t < text.length) {
    if (p < pattern.length && (pattern[p] === text[t] || pattern[p] === '?')) {
      p++;
      t++;
    } else if (p < pattern.length && pattern[p] === '*') {
      star = p++;
      mark = t;
    } else if (star !== -1) {
      p = star + 1;
      t = ++mark;
    } else return false;
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}

/** Failed logins the dashboard account takes per window, across every client address. */
export const ACCOUNT_LOGIN_LIMIT = { failures: 30, windowMs: 60_000 } as const;

export class GatewayAuth {
  /** Times of recent failed logins (any address), for ACCOUNT_LOGIN_LIMIT. */
  private loginFailures: number[] = [];
  /** sha256(token) → expiry, mirrored from the sessions table. */
  private readonly sessions = new Map<string, number>();
  /** Key id → last use (flushed in batches by the usage recorder). */
  readonly lastUsed = new Map<string, number>();

  constructor(
    private readonly db: GatewayStore,
    private readonly catalog: () => Catalog,
    private readonly clock: Clock,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    for (const s of db.listSessions(clock.now())) this.sessions.set(s.tokenHash, s.expiresAt);
  }

  /** Last use: shown at once (the catalog record) and written to the database with the next usage flush. */
  private touch(key: ApiKeyRecord, now: number): void {
    key.lastUsedAt = now;
    if (key.source === 'api') this.lastUsed.set(key.id, now);
  }

  /**
   * REQUIRE_API_KEY=true/false decides. Unset, keys are required as soon as one exists (declared in
   * gateway.yaml or created through the API): a declared key that is not enforced would let a wrong
   * key through.
   */
  get requireApiKey(): boolean {
    const set = this.env.REQUIRE_API_KEY?.trim();
    if (set) return /^(1|true|yes|on)$/i.test(set);
    return this.catalog().keysById.size > 0;
  }

  /** Presented key → its sha256, for keys that matched (every inference call hashes otherwise). Bounded. */
  private readonly hashOf = new Map<string, string>();

  private lookup(raw: string): ApiKeyRecord | undefined {
    const keys = this.catalog().keysByHash;
    const cached = this.hashOf.get(raw);
    if (cached !== undefined) return keys.get(cached);
    const hash = sha256Hex(raw);
    const key = keys.get(hash);
    if (key) {
      if (this.hashOf.size >= 1024) this.hashOf.clear();
      this.hashOf.set(raw, hash);
    }
    return key;
  }

  /** Authenticate an inference call; throws 401 when a key is required and missing or invalid. */
  inference(ctx: RequestContext): Principal {
    const raw = presentedKey(ctx);
    const now = this.clock.now();
    if (raw !== undefined) {
      const key = this.lookup(raw);
      if (key && keyUsable(key, now)) {
        this.touch(key, now);
        return { key, trusted: ctx.viaSocket };
      }
      if (this.requireApiKey && !ctx.viaSocket) {
        throw new HttpError(401, key ? 'API key is disabled, revoked or expired' : 'invalid API key', { code: 'invalid_api_key' });
      }
      return { trusted: ctx.viaSocket };
    }
    if (this.requireApiKey && !ctx.viaSocket) {
      throw new HttpError(401, 'missing API key: send Authorization: Bearer <key>', { code: 'missing_api_key' });
    }
    return { trusted: ctx.viaSocket };
  }

  /**
   * MCP transports: the control socket, or a Bearer API key with the `mcp` scope (401 without a
   * usable key, 403 when it lacks the scope), whatever REQUIRE_API_KEY says.
   */
  mcp(ctx: RequestContext): Principal {
    return this.scoped(ctx, ['mcp'], 'MCP');
  }

  /**
   * The control socket, or a Bearer API key with one of `scopes` (401 without a usable key, 403 when
   * it has none of them), whatever REQUIRE_API_KEY says. `what` names the feature in the 401.
   */
  scoped(ctx: RequestContext, scopes: readonly KeyScope[], what: string): Principal {
    if (ctx.viaSocket) return { trusted: true };
    const raw = presentedKey(ctx);
    if (raw === undefined) throw new HttpError(401, `${what} needs an API key with the ${scopes.join(' or ')} scope: send Authorization: Bearer <key>`, { code: 'missing_api_key' });
    const now = this.clock.now();
    const key = this.lookup(raw);
    if (!key || !keyUsable(key, now)) throw new HttpError(401, key ? 'API key is disabled, revoked or expired' : 'invalid API key', { code: 'invalid_api_key' });
    if (!scopes.some((s) => key.scopes.includes(s))) throw new HttpError(403, `API key "${key.name}" lacks the ${scopes.join(' or ')} scope`, { code: 'insufficient_scope' });
    this.touch(key, now);
    return { key, trusted: false };
  }

  /** Throws 403 when the principal's key may not use `model`. */
  checkModel(p: Principal, ...models: string[]): void {
    if (!p.key) return;
    if (models.some((m) => modelAllowed(p.key!.models, m))) return;
    throw new HttpError(403, `API key "${p.key.name}" is not allowed to use model ${models[0]}`, { code: 'model_not_allowed' });
  }

  /** Management access: control socket, login cookie or management-scoped key. Throws 401. */
  management(ctx: RequestContext): void {
    if (ctx.viaSocket) return;
    const now = this.clock.now();
    const token = cookieValue(ctx.req.headers.cookie, AUTH_COOKIE);
    if (token) {
      const hash = sha256Hex(token);
      const exp = this.sessionExpiry(hash);
      if (exp !== undefined && exp > now) return;
      if (exp !== undefined) this.sessions.delete(hash);
    }
    const raw = presentedKey(ctx);
    if (raw !== undefined) {
      const key = this.lookup(raw);
      if (key && keyUsable(key, now) && key.scopes.includes('management')) {
        this.touch(key, now);
        return;
      }
    }
    throw new HttpError(401, 'management authentication required: log in (POST /api/auth/login) or use a management-scoped API key', {
      code: 'unauthorized',
    });
  }

  /** Whether management() would let the request through (no throw). */
  managementPasses(ctx: RequestContext): boolean {
    try {
      this.management(ctx);
      return true;
    } catch (e) {
      if (e instanceof HttpError && e.status === 401) return false;
      throw e;
    }
  }

  /**
   * Admin routes (`/api/admin/*`): the control socket and a login session pass; a key needs the
   * `admin` scope besides `management` (403 otherwise).
   */
  checkAdmin(ctx: RequestContext): void {
    if (ctx.viaSocket) return;
    const raw = presentedKey(ctx);
    if (raw === undefined) return;
    const key = this.lookup(raw);
    if (key && !key.scopes.includes('admin')) throw new HttpError(403, `API key "${key.name}" lacks the admin scope`, { code: 'insufficient_scope' });
  }

  /** Who a management request comes from, for the audit log (never the secret itself). */
  actorOf(ctx: RequestContext): string {
    if (ctx.viaSocket) return 'control-socket';
    const raw = presentedKey(ctx);
    if (raw !== undefined) {
      const key = this.lookup(raw);
      if (key) return `key:${key.name}`;
    }
    const token = cookieValue(ctx.req.headers.cookie, AUTH_COOKIE);
    if (token && this.sessionExpiry(sha256Hex(token)) !== undefined) return 'login-session';
    return 'anonymous';
  }

  /** A session's expiry: from the shared store when sessions are shared (another daemon may have made or ended it). */
  private sessionExpiry(hash: string): number | undefined {
    return this.db.sessionsShared ? this.db.sessionExpiry(hash) : this.sessions.get(hash);
  }

  /** Whether a password (saved or INITIAL_PASSWORD) is configured. */
  loginConfigured(): boolean {
    return this.db.getSetting('password_hash') !== undefined || !!this.env.INITIAL_PASSWORD;
  }

  /** Whether `password` is the current login password (the saved one, else INITIAL_PASSWORD). */
  async isCurrentPassword(password: string): Promise<boolean> {
    const saved = this.db.getSetting('password_hash');
    if (saved !== undefined) return verifyPassword(password, saved);
    return !!this.env.INITIAL_PASSWORD && constantTimeEqual(password, this.env.INITIAL_PASSWORD);
  }

  /** Check a login password; on success return a new session token and its expiry. */
  async login(password: string): Promise<{ token: string; expiresAt: number }> {
    // The per-IP limit on the route does not stop guesses spread over many addresses: the one
    // dashboard account takes at most ACCOUNT_LOGIN_LIMIT failures per window, from anywhere.
    const now0 = this.clock.now();
    this.loginFailures = this.loginFailures.filter((t) => t > now0 - ACCOUNT_LOGIN_LIMIT.windowMs);
    if (this.loginFailures.length >= ACCOUNT_LOGIN_LIMIT.failures) {
      const retry = Math.ceil((this.loginFailures[0]! + ACCOUNT_LOGIN_LIMIT.windowMs - now0) / 1000);
      throw new HttpError(429, `too many failed logins for this account; try again in ${retry} s (the control socket needs no login)`, { code: 'login_rate_limited', headers: { 'Retry-After': String(retry) } });
    }
    const saved = this.db.getSetting('password_hash');
    let ok = false;
    if (saved !== undefined) ok = await verifyPassword(password, saved);
    else if (this.env.INITIAL_PASSWORD) ok = constantTimeEqual(password, this.env.INITIAL_PASSWORD);
    else throw new HttpError(401, 'login is not configured: set INITIAL_PASSWORD or save a password over the control socket', { code: 'login_not_configured' });
    if (!ok) {
      this.loginFailures.push(now0);
      throw new HttpError(401, 'invalid password', { code: 'invalid_password' });
    }
    const token = randomBytes(32).toString('base64url');
    const now = this.clock.now();
    const expiresAt = now + SESSION_TTL_MS;
    const hash = sha256Hex(token);
    this.db.saveSession(hash, now, expiresAt);
    this.sessions.set(hash, expiresAt);
    return { token, expiresAt };
  }

  logout(ctx: RequestContext): void {
    const token = cookieValue(ctx.req.headers.cookie, AUTH_COOKIE);
    if (!token) return;
    const hash = sha256Hex(token);
    this.sessions.delete(hash);
    this.db.deleteSession(hash);
  }

  /** Save a new password hash; every existing session ends. */
  async setPassword(password: string): Promise<void> {
    this.db.setSetting('password_hash', await hashPassword(password));
    this.db.deleteAllSessions();
    this.sessions.clear();
    await this.db.settled();
  }
}

export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i < 0) continue;
    if (part.slice(0, i).trim() === name) {
      const v = part.slice(i + 1).trim();
      try {
        return decodeURIComponent(v);
      } catch {
        return v;
      }
    }
  }
  return undefined;
}

function constantTimeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

/** `scrypt$<salt b64>$<hash b64>` */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, 32);
  return `scrypt$${salt.toString('base64')}$${hash.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [algo, saltB64, hashB64] = stored.split('$');
  if (algo !== 'scrypt' || !saltB64 || !hashB64) return false;
  const expected = Buffer.from(hashB64, 'base64');
  const got = await scrypt(password, Buffer.from(saltB64, 'base64'), expected.length);
  return got.length === expected.length && timingSafeEqual(got, expected);
}
