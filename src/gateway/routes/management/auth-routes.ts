/**
 * Dashboard login: POST /api/auth/login {password} sets the `auth_token` cookie (HttpOnly,
 * SameSite=Lax, 24 h); POST /api/auth/logout ends the session; POST /api/auth/password {password,
 * currentPassword} saves a new password hash (management auth; currentPassword may be left out over
 * the control socket or while no login is configured) and ends every session; GET /api/auth/status says whether the
 * caller is authenticated, and whether management needs a login at all (`requireLogin`; when false the
 * dashboard opens without one).
 */
import type { TLSSocket } from 'node:tls';
import { badRequest, HttpError } from '../../../http/errors.js';
import type { RequestContext } from '../../../http/context.js';
import type { Router } from '../../../http/router.js';
import { AUTH_COOKIE, SESSION_TTL_MS } from '../../auth.js';
import type { GatewayServices } from '../../services.js';
import { iso, ok, readObject } from '../common.js';

/** POST /api/auth/login: attempts per client IP and window (seconds). */
export const LOGIN_RATE_LIMIT = { limit: 10, interval: 60 } as const;

function cookie(ctx: RequestContext, value: string, maxAgeSeconds: number): string {
  const secure = (ctx.req.socket as TLSSocket).encrypted ? '; Secure' : '';
  return `${AUTH_COOKIE}=${encodeURIComponent(value)}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure}`;
}

export function authRoutes(r: Router, svc: GatewayServices): void {
  r.post('/api/auth/login', async (ctx) => {
    const body = await readObject(ctx);
    if (typeof body.password !== 'string' || body.password.length === 0) throw badRequest('password is required');
    if (body.password.length > 1024) throw badRequest('password is too long');
    const { token, expiresAt } = await svc.auth.login(body.password);
    // With shared storage the session is in PostgreSQL (good on every daemon) before the answer.
    await svc.state.db.settled();
    ctx.res.setHeader('Set-Cookie', cookie(ctx, token, Math.floor(SESSION_TTL_MS / 1000)));
    ok(ctx, { success: true, expiresAt: iso(expiresAt) });
  })
    .tag('auth', 'public')
    .rateLimit(LOGIN_RATE_LIMIT.limit, LOGIN_RATE_LIMIT.interval);

  r.post('/api/auth/logout', async (ctx) => {
    svc.auth.logout(ctx);
    await svc.state.db.settled();
    ctx.res.setHeader('Set-Cookie', cookie(ctx, '', 0));
    ok(ctx, { success: true });
  }).tag('auth', 'public');

  r.get('/api/auth/status', (ctx) => {
    let authenticated = true;
    try {
      svc.auth.management(ctx);
    } catch {
      authenticated = false;
    }
    ok(ctx, { authenticated, loginConfigured: svc.auth.loginConfigured(), requireApiKey: svc.auth.requireApiKey, requireLogin: svc.runtime.general.value.requireLogin });
  }).tag('auth', 'public');

  r.post('/api/auth/password', async (ctx) => {
    const body = await readObject(ctx);
    const pw = body.password ?? body.newPassword;
    if (typeof pw !== 'string' || pw.length < 8) throw badRequest('password must be a string of at least 8 characters');
    if (pw.length > 1024) throw badRequest('password is too long');
    // A stolen session or management key must not be enough to take the login over. The control
    // socket (file permissions are its authentication) stays the way to reset a forgotten password.
    if (!ctx.viaSocket && svc.auth.loginConfigured()) {
      const current = body.currentPassword;
      if (typeof current !== 'string' || current.length === 0 || current.length > 1024) throw badRequest('currentPassword is required to change the password (over the control socket it may be left out)', { code: 'current_password_required' });
      if (!(await svc.auth.isCurrentPassword(current))) throw new HttpError(403, 'currentPassword is not the current password', { code: 'invalid_current_password' });
    }
    await svc.auth.setPassword(pw);
    ok(ctx, { success: true });
  }).tag('auth', 'management');
}
