import { HttpError } from '../../http/errors.js';
import type { Middleware } from '../../http/router.js';
import type { TokenIssuer } from './tokens.js';

/**
 * Bearer authentication on TCP listeners. Routes tagged `public` (login, health) skip it; requests
 * on the control socket are trusted by its file permissions, as for every ctl API.
 */
export function bearerAuth(tokens: TokenIssuer, passwordHash: () => string | null): Middleware {
  return async (ctx, route, next) => {
    if (route.meta.public || ctx.viaSocket) return next();
    const header = ctx.req.headers.authorization ?? '';
    const m = /^Bearer[ \t]+([A-Za-z0-9._~+/=-]+)[ \t]*$/i.exec(header);
    if (!m) throw new HttpError(401, 'Not authenticated', { headers: { 'WWW-Authenticate': 'Bearer' } });
    const reason = await tokens.check(m[1]!, passwordHash());
    if (reason) throw new HttpError(401, `Could not validate credentials: ${reason}`, { headers: { 'WWW-Authenticate': 'Bearer' } });
    ctx.state.principal = 'owner';
    return next();
  };
}
