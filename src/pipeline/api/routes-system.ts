import { HttpError } from '../../http/errors.js';
import { verifyPassword } from '../auth/password.js';
import { TOKEN_TTL_SECONDS } from '../auth/tokens.js';
import type { Services } from '../services.js';
import { nowIso } from '../time.js';
import { buildOpenApi } from './openapi.js';
import type { ApiRegistry } from './registry.js';
import { Health, LoginBody, TokenResponse } from './schemas.js';

export function systemRoutes(api: ApiRegistry, s: Services): void {
  api
    .add({
      method: 'POST',
      path: '/api/auth/login',
      tag: 'auth',
      summary: 'Log in with the owner password; returns a bearer token valid for 24 hours',
      public: true,
      body: LoginBody,
      response: TokenResponse,
      errors: [401, 429, 503],
      handler: async (_ctx, body: { password: string }) => {
        const hash = s.config.ownerPasswordHash;
        if (!hash) {
          throw new HttpError(503, 'login is disabled: no owner password is configured (pipeline.owner-password in ctl.yaml or PIPELINE_OWNER_PASSWORD)');
        }
        if (!(await verifyPassword(body.password, hash))) {
          throw new HttpError(401, 'Incorrect password', { headers: { 'WWW-Authenticate': 'Bearer' } });
        }
        return { access_token: await s.tokens.issue(hash), token_type: 'bearer', expires_in: TOKEN_TTL_SECONDS };
      },
    })
    .rateLimit(s.config.loginRateLimit.limit, s.config.loginRateLimit.interval);

  api.add({
    method: 'GET',
    path: '/api/system/health',
    tag: 'system',
    summary: 'Service health (no token needed)',
    public: true,
    response: Health,
    handler: async () => ({ status: 'healthy', version: s.version, timestamp: nowIso(s.clock), schedules: (await s.scheduler?.states()) ?? [] }),
  });

  let cached: unknown;
  api.add({
    method: 'GET',
    path: '/api/openapi.json',
    tag: 'system',
    summary: 'This OpenAPI 3.1 document',
    handler: () => (cached ??= buildOpenApi(api.specs, s.version)),
  });
}
