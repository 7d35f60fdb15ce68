/**
 * Routes of the Core API cluster: `/core/control` (bootstrap, join, tokens; control socket only),
 * `/core/1.0/cluster` and `/core/1.0/tokens/{name}`, and `/core/internal/*` (member to member).
 */
import type { TLSSocket } from 'node:tls';
import { badRequest, HttpError, type RequestContext, type Router } from '../../http/index.js';
import { parseDuration } from '../../http/duration.js';
import { sendSync } from '../envelope.js';
import { fingerprint } from './identity.js';
import type { ClusterService } from './service.js';

/** Fingerprint of the TLS client certificate of a request, if it sent one. */
export function peerFingerprint(ctx: RequestContext): string | undefined {
  const sock = ctx.req.socket as Partial<TLSSocket>;
  const raw = typeof sock.getPeerCertificate === 'function' ? sock.getPeerCertificate(false)?.raw : undefined;
  return raw && raw.length > 0 ? fingerprint(raw) : undefined;
}

/** `expire_after`: Go's time.Duration in JSON is integer nanoseconds; a duration string (`3h`) is accepted too. */
function expireAfterNs(v: unknown): number {
  if (v === undefined || v === null) return 0;
  if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return v;
  if (typeof v === 'string') {
    const ms = parseDuration(v);
    if (ms !== null && ms >= 0) return ms * 1e6;
  }
  throw badRequest('expire_after must be nanoseconds (a non-negative integer) or a duration such as 3h');
}

export function clusterRoutes(r: Router, cluster: ClusterService, readObject: (ctx: RequestContext) => Promise<Record<string, unknown>>): void {
  r.post('/core/control', async (ctx) => {
    const body = await readObject(ctx);
    if (body.bootstrap === true && body.join_token !== undefined && body.join_token !== '') throw badRequest('Invalid options: give bootstrap or join_token, not both');
    if (body.bootstrap === true) await cluster.bootstrap(body);
    else if (typeof body.join_token === 'string' && body.join_token !== '') await cluster.join(body);
    else throw badRequest('Invalid options: want bootstrap: true or a join_token');
    sendSync(ctx.res);
  });

  r.post('/core/control/tokens', async (ctx) => {
    const body = await readObject(ctx);
    sendSync(ctx.res, await cluster.createToken(body.name, expireAfterNs(body.expire_after)));
  });
  r.get('/core/control/tokens', (ctx) => sendSync(ctx.res, cluster.tokens()));
  r.delete('/core/1.0/tokens/:name', async (ctx) => {
    await cluster.revokeToken(ctx.params.name!);
    sendSync(ctx.res);
  });

  r.get('/core/1.0/cluster', (ctx) => sendSync(ctx.res, cluster.members()));
  r.delete('/core/1.0/cluster/:name', async (ctx) => {
    await cluster.remove(ctx.params.name!);
    sendSync(ctx.res);
  });

  // Member to member. The join request is the one a daemon not yet trusted may send.
  r.post('/core/internal/cluster', async (ctx) => {
    const body = await readObject(ctx);
    sendSync(ctx.res, await cluster.acceptJoin(body, peerFingerprint(ctx)));
  });
  r.post('/core/internal/truststore', async (ctx) => {
    cluster.trust(await readObject(ctx));
    sendSync(ctx.res);
  });
  r.delete('/core/internal/truststore/:name', (ctx) => {
    cluster.distrust(ctx.params.name!);
    sendSync(ctx.res);
  });
  // Join tokens are held by every member: one issued elsewhere, and one used or revoked elsewhere.
  r.post('/core/internal/tokens', async (ctx) => {
    cluster.learnToken(await readObject(ctx));
    sendSync(ctx.res);
  });
  r.post('/core/internal/tokens/spend', async (ctx) => {
    cluster.spendToken(await readObject(ctx));
    sendSync(ctx.res);
  });
  r.post('/core/internal/heartbeat', async (ctx) => {
    const body = await readObject(ctx);
    const fp = peerFingerprint(ctx);
    if (!fp) throw new HttpError(403, 'not authorized');
    sendSync(ctx.res, cluster.receiveHeartbeat(body, fp));
  });
}
