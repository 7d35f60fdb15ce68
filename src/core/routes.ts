import { Router, HttpError, readJson, badRequest, type RequestContext } from '../http/index.js';
import type { DaemonControl, DaemonInfo } from './daemon-control.js';
import { sendSync } from './envelope.js';
import { clusterRoutes, peerFingerprint } from './cluster/routes.js';
import type { ClusterService } from './cluster/service.js';

/** Default limits on mutating Core API routes (per client IP; the socket is one bucket `0.0.0.0`). */
export const CORE_MUTATION_LIMIT = { limit: 120, interval: 60 };

/** `?restart=` as a boolean: absent/empty/0/false → false, 1/true → true, anything else → 400. */
export function parseRestart(ctx: RequestContext): boolean {
  const v = ctx.query.get('restart');
  if (v === null || v === '' || /^(0|false)$/i.test(v)) return false;
  if (/^(1|true)$/i.test(v)) return true;
  throw badRequest(`Invalid value for restart: ${JSON.stringify(v)} (want true or false)`);
}

export async function readObject(ctx: RequestContext): Promise<Record<string, unknown>> {
  let body: unknown;
  try {
    // Like microcluster, the body is JSON whatever the Content-Type says (so `curl -d` works).
    body = await readJson(ctx, { limit: 64 * 1024, checkType: false });
  } catch (e) {
    if (e instanceof HttpError && e.status !== 413) throw badRequest(e.message);
    throw e;
  }
  if (body === undefined) throw badRequest('Request body is empty');
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('Request body must be a JSON object');
  return body as Record<string, unknown>;
}

/** What the access rules need to know of the cluster. */
export interface ClusterAccess {
  initialised(): boolean;
  trustedFingerprint(fp: string | undefined): boolean;
  /** A certificate of a member that was removed. */
  removedFingerprint?(fp: string | undefined): boolean;
}

/**
 * Who may do what. The control socket: everything (whoever can open it is trusted). Over TCP:
 * `/core/control` does not exist; before bootstrap or join (the pre-init listener) reads only;
 * on the cluster address, a client presenting a member's certificate may read and use
 * `/core/internal`, anyone else only `GET /`, `GET /core/1.0` and the join request. Changes to the
 * daemon through `/core/1.0` stay on the socket.
 */
function admit(ctx: RequestContext, method: string, pattern: string, cluster?: ClusterAccess): void {
  if (ctx.viaSocket) return;
  if (pattern.startsWith('/core/control')) throw new HttpError(404, 'not found');
  const open = (method === 'GET' && (pattern === '/' || pattern === '/core/1.0')) || (method === 'POST' && pattern === '/core/internal/cluster');
  if (!cluster?.initialised()) {
    if (pattern.startsWith('/core/internal') && !open) throw new HttpError(403, 'not authorized');
    if (method !== 'GET' && !open) throw new HttpError(403, 'Core API changes are only accepted on the control socket');
    return;
  }
  if (open) return;
  const fp = peerFingerprint(ctx);
  if (!cluster.trustedFingerprint(fp)) {
    // A removed member that was down or frozen through its removal learns of it from its heartbeats.
    if (method === 'POST' && pattern === '/core/internal/heartbeat' && cluster.removedFingerprint?.(fp)) throw new HttpError(410, 'This member was removed from the cluster');
    throw new HttpError(403, 'not authorized');
  }
  if (method !== 'GET' && !pattern.startsWith('/core/internal')) throw new HttpError(403, 'Core API changes are only accepted on the control socket');
}

/** Whether a request may see the daemon's internals: over the socket, or with a member's certificate. */
function fullAnswer(ctx: RequestContext, cluster?: ClusterAccess): boolean {
  return ctx.viaSocket || (cluster?.initialised() === true && cluster.trustedFingerprint(peerFingerprint(ctx)));
}

/**
 * `GET /core/1.0` for anyone else over TCP: microcluster's public server info and nothing more
 * (no state dir, pid, listeners or storage URLs).
 */
function publicInfo(i: DaemonInfo & { extensions: string[] }): Pick<DaemonInfo, 'name' | 'address' | 'version' | 'ready' | 'extensions'> {
  return { name: i.name, address: i.address, version: i.version, ready: i.ready, extensions: i.extensions };
}

export function coreRoutes(daemon: () => DaemonControl, extensions: string[], cluster?: ClusterService): Router {
  const r = new Router();
  const { limit, interval } = CORE_MUTATION_LIMIT;
  r.use(async (ctx, route, next) => {
    admit(ctx, route.method, route.pattern, cluster);
    await next();
  });
  if (cluster) clusterRoutes(r, cluster, readObject);

  r.get('/', (ctx) => sendSync(ctx.res, ['/1.0']));
  r.get('/core/1.0', (ctx) => {
    const info = { ...daemon().info(), extensions };
    sendSync(ctx.res, fullAnswer(ctx, cluster) ? info : publicInfo(info));
  });
  r.get('/core/1.0/ready', (ctx) => {
    const state = daemon().ready();
    if (!state.ready) throw new HttpError(503, state.reason ?? 'Daemon is not ready yet');
    sendSync(ctx.res);
  });

  r.get('/core/1.0/daemon/config', (ctx) => sendSync(ctx.res, daemon().getConfig()));
  r.put('/core/1.0/daemon/config', async (ctx) => {
    const restart = parseRestart(ctx);
    const body = await readObject(ctx);
    await daemon().putConfig(body, { restart });
    sendSync(ctx.res);
  }).rateLimit(limit, interval);
  r.patch('/core/1.0/daemon/config', async (ctx) => {
    const restart = parseRestart(ctx);
    const body = await readObject(ctx);
    await daemon().patchConfig(body, { restart });
    sendSync(ctx.res);
  }).rateLimit(limit, interval);

  r.get('/core/1.0/daemon/servers', (ctx) => sendSync(ctx.res, daemon().getConfig().servers));
  r.put('/core/1.0/daemon/servers', async (ctx) => {
    const body = await readObject(ctx);
    await daemon().putServers(body);
    sendSync(ctx.res);
  }).rateLimit(limit, interval);

  r.get('/core/1.0/ratelimit', (ctx) => {
    const rl = daemon().ratelimit;
    if (!rl) throw new HttpError(404, 'rate limiter not enabled');
    sendSync(ctx.res, rl.status());
  });
  r.post('/core/1.0/ratelimit/reset', async (ctx) => {
    const rl = daemon().ratelimit;
    if (!rl) throw new HttpError(404, 'rate limiter not enabled');
    const body = ctx.req.headers['content-length'] === '0' ? {} : await readObject(ctx).catch((e) => {
      if (e instanceof HttpError && e.message === 'Request body is empty') return {};
      throw e;
    });
    const filter: { route?: string; ip?: string; server?: string } = {};
    for (const key of ['route', 'ip', 'server'] as const) {
      const v = body[key];
      if (v === undefined || v === null) continue;
      if (typeof v !== 'string') throw badRequest(`${key} must be a string`);
      filter[key] = v;
    }
    sendSync(ctx.res, { cleared: await rl.reset(filter) });
  }).rateLimit(limit, interval);

  return r;
}
