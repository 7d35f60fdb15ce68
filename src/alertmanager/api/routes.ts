/**
 * The HTTP surface: /api/v2 (status, receivers, silences, silence/{id}, alerts, alerts/groups)
 * and the /-/ health and reload endpoints, answering with Alertmanager 0.25's status codes and
 * bodies.
 */
import type { RequestContext } from '../../http/context.js';
import { HttpError } from '../../http/errors.js';
import { sendEmpty, sendText } from '../../http/respond.js';
import type { Router } from '../../http/router.js';
import { countReceived, type AlertmanagerMetrics } from '../metrics.js';
import { PAUSE, type Engine, type AlertQuery, type GroupsPage, type JsonPieces } from '../engine.js';
import { parseMatcher, MatcherParseError, type Matcher } from '../matchers.js';
import { compileAnchored, RegexError } from '../regex.js';
import { SilenceInvalid, SilenceNotFound } from '../silences.js';
import { StorageUnavailable } from '../../store/unavailable.js';
import { formatTime, goQuote } from '../timefmt.js';
import { checkJsonContentType, frameworkError, readPostableAlerts, readPostableSilence, type PostableAlert } from './bodies.js';
import { goJson, goJsonString } from './json.js';

export interface ApiDeps {
  engine: Engine;
  /** Reload alertmanager.yml; resolves with an error text when the new file was rejected. */
  reload(): Promise<string | undefined>;
  versionInfo: Record<string, string>;
  metrics?: AlertmanagerMetrics;
  /**
   * With alerts in the database several daemons share: store a POST's alerts and resolve once they
   * are written there (rejects with StorageUnavailable when the database refused them).
   */
  postAlerts?(alerts: PostableAlert[]): Promise<string[]>;
  /**
   * The daemons sharing this daemon's storage (the daemon's `membership` handle, present with
   * storage.postgres): the cluster status lists the live ones that run an alert manager.
   */
  membership?: () => ClusterMembership | undefined;
}

/** What the daemon's `membership` handle answers (src/daemon/presence.ts; components do not import the daemon). */
export interface ClusterMembership {
  status(server: string): Promise<{ name: string; status: 'ready' | 'settling'; peers: Array<{ name: string; address: string }> }>;
}

/** A handler error: a JSON string and a newline, as go-swagger responders write payload strings. */
export function amError(status: number, message: string): HttpError {
  return new HttpError(status, message, { code: 'am_string' });
}

/** Successful JSON: Go's json.Encoder ends the document with a newline (Buffers come with it). */
/** Wait for 'drain' (or 'close'), leaving no listener behind. */
function drained(res: RequestContext['res']): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * Send a JSON document rendered piece by piece, in writes of about 64 KiB, honouring
 * backpressure. A document that fits in one write gets a Content-Length; a longer one is sent
 * chunked, as Go's net/http does once a handler has written more than its buffer.
 */
/**
 * Rendering time the answers being sent share per turn of the event loop. Twenty GETs of a full
 * store, each giving the loop back after a fixed number of alerts, still rendered twenty slices in
 * one turn (all their setImmediate callbacks run in the same phase): 750 ms.
 */
const RENDER_TURN_MS = 8;
let turnStart = 0;
let turnOpen = false;

/** Whether this turn's rendering time is spent; the first call in a turn starts it. */
function renderTurnSpent(): boolean {
  const now = performance.now();
  if (!turnOpen) {
    turnOpen = true;
    turnStart = now;
    // Runs before the answers that pause from now on resume: each turn starts afresh.
    setImmediate(() => (turnOpen = false));
    return false;
  }
  return now - turnStart > RENDER_TURN_MS;
}

export async function sendAmJsonPieces(ctx: RequestContext, pieces: JsonPieces): Promise<void> {
  const res = ctx.res;
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json');
  let chunk = '';
  const it = pieces[Symbol.iterator]();
  try {
    for (;;) {
      // Before each piece is rendered (an answer resumed by its socket's drain too): a socket that
      // takes every write at once (a fast reader) would otherwise let the whole answer render in
      // one go; the rendering of every answer together gets RENDER_TURN_MS per turn of the loop.
      if (renderTurnSpent()) {
        await new Promise((resolve) => setImmediate(resolve));
        if (res.destroyed) return;
      }
      const next = it.next();
      if (next.done) break;
      if (next.value === PAUSE) continue;
      chunk += next.value;
      if (chunk.length < 65536) continue;
      const ok = res.write(chunk, 'utf8');
      chunk = '';
      if (!ok && !res.destroyed) await drained(res);
      if (res.destroyed) return;
    }
  } finally {
    // An answer cut short ends its renderer (which releases the alerts it pinned).
    it.return?.();
  }
  if (!res.headersSent) res.setHeader('Content-Length', Buffer.byteLength(chunk, 'utf8'));
  res.end(chunk, 'utf8');
}

export function sendAmJson(ctx: RequestContext, text: string | Buffer): void {
  const body = typeof text === 'string' ? text + '\n' : text;
  const res = ctx.res;
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

const TRUE_WORDS = new Set(['true', '1', 'yes', 'ok', 'y', 'on', 'selected', 'checked', 't', 'enabled']);

/** go-openapi boolean query parameter: last value wins; empty means the default (true). */
export function boolParam(ctx: RequestContext, name: string): boolean {
  const all = ctx.query.getAll(name);
  if (all.length === 0) return true;
  const raw = all[all.length - 1]!;
  if (raw === '') return true;
  return TRUE_WORDS.has(raw.toLowerCase());
}

/** A ctl paging parameter: absent, or a whole number from 0 to 1,000,000 (else 400). */
function countParam(ctx: RequestContext, name: string): number | undefined {
  const all = ctx.query.getAll(name);
  if (all.length === 0) return undefined;
  const raw = all[all.length - 1]!;
  if (!/^\d{1,7}$/.test(raw) || Number(raw) > 1_000_000) throw amError(400, `${name}: want a whole number from 0 to 1000000, got ${goQuote(raw)}`);
  return Number(raw);
}

/** `filter` values, each one matcher (a bad one is a 400 string, as the handlers answer). */
export function filterParam(ctx: RequestContext): Matcher[] {
  return ctx.query.getAll('filter').map((f) => {
    try {
      return parseMatcher(f);
    } catch (e) {
      if (e instanceof MatcherParseError || e instanceof RegexError) throw amError(400, e.message);
      throw e;
    }
  });
}

function alertQuery(ctx: RequestContext): AlertQuery {
  const filter = filterParam(ctx);
  const all = ctx.query.getAll('receiver');
  const raw = all.length > 0 ? all[all.length - 1]! : '';
  let receiver;
  if (raw !== '') {
    try {
      receiver = compileAnchored(raw);
    } catch (e) {
      throw amError(400, `failed to parse receiver param: ${(e as Error).message}`);
    }
  }
  return { filter, receiver, active: boolParam(ctx, 'active'), silenced: boolParam(ctx, 'silenced'), inhibited: boolParam(ctx, 'inhibited') };
}

const UUID_RE = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

function silenceIdParam(ctx: RequestContext): string {
  const id = ctx.params.silenceID ?? '';
  if (!UUID_RE.test(id)) throw frameworkError(422, 601, `silenceID in path must be of type uuid: ${goQuote(id)}`);
  return id;
}

export function registerApiRoutes(router: Router, deps: ApiDeps): void {
  const { engine } = deps;

  router.get('/api/v2/status', async (ctx) => {
    // Alertmanager 0.25 without clustering: {"peers":[],"status":"disabled"} and no name. With other
    // daemons on the same PostgreSQL: its clusterStatus (name, peers with this one among them, status).
    const m = deps.membership?.();
    let cluster: unknown = { peers: [], status: 'disabled' };
    if (m) {
      const s = await m.status('alertmanager');
      cluster = { name: s.name, peers: s.peers.map((p) => ({ address: p.address, name: p.name })), status: s.status };
    }
    const body = {
      cluster,
      config: { original: engine.config.original },
      uptime: formatTime(engine.startedAt),
      versionInfo: deps.versionInfo,
    };
    sendAmJson(ctx, goJson(body));
  });

  router.get('/api/v2/receivers', (ctx) => {
    sendAmJson(ctx, '[' + engine.config.receivers.map((n) => '{"name":' + goJsonString(n) + '}').join(',') + ']');
  });

  router.get('/api/v2/silences', (ctx) => {
    sendAmJson(ctx, engine.silencesJson(filterParam(ctx)));
  });

  router.post('/api/v2/silences', async (ctx) => {
    const input = await readPostableSilence(ctx);
    if (input.startsAt >= input.endsAt) throw amError(400, 'Failed to create silence: start time must be before end time');
    if (input.endsAt < engine.clock.now()) throw amError(400, "Failed to create silence: end time can't be in the past");
    let id: string;
    try {
      id = await engine.silences.set(input);
    } catch (e) {
      if (e instanceof SilenceNotFound) throw amError(404, e.message);
      if (e instanceof SilenceInvalid) throw amError(400, e.message);
      if (e instanceof StorageUnavailable) throw amError(503, `Failed to create silence: ${e.message}`);
      throw e;
    }
    sendAmJson(ctx, '{"silenceID":' + goJsonString(id) + '}');
  });

  router.get('/api/v2/silence/:silenceID', (ctx) => {
    const id = silenceIdParam(ctx);
    const s = engine.silences.get(id);
    if (!s) return sendEmpty(ctx.res, 404);
    sendAmJson(ctx, engine.silenceJson(s, engine.clock.now()));
  });

  router.delete('/api/v2/silence/:silenceID', async (ctx) => {
    const id = silenceIdParam(ctx);
    try {
      await engine.silences.expire(id);
    } catch (e) {
      // 0.25 answered 500 "silence not found"; 0.26+ answers 404 with no body.
      if (e instanceof SilenceNotFound) return sendEmpty(ctx.res, 404);
      if (e instanceof StorageUnavailable) throw amError(503, `Failed to expire silence: ${e.message}`);
      throw e;
    }
    sendEmpty(ctx.res, 200);
  });

  router.get('/api/v2/alerts', (ctx) => {
    return sendAmJsonPieces(ctx, engine.alertsJson(alertQuery(ctx)));
  });

  router.post('/api/v2/alerts', async (ctx) => {
    const { alerts, plain } = await readPostableAlerts(ctx, engine.limits.maxBatchBytes);
    // A plain body can be journaled as it is (raw-batch.ts).
    let errors: string[];
    try {
      errors = deps.postAlerts ? await deps.postAlerts(alerts) : engine.postAlerts(alerts, plain ? ctx.rawBody : undefined);
    } catch (e) {
      if (e instanceof StorageUnavailable) throw amError(503, `Failed to store alerts: ${e.message}`);
      throw e;
    }
    if (deps.metrics) countReceived(deps.metrics, alerts, errors.length, engine.clock.now());
    if (errors.length > 0) throw amError(400, errors.join('; '));
    sendEmpty(ctx.res, 200);
  });

  router.get('/api/v2/alerts/groups', (ctx) => {
    const q = alertQuery(ctx);
    // ctl's paging for the web console's first render (not in 0.25; without it the answer is 0.25's).
    const groups = countParam(ctx, 'ctl_groups');
    const alertsPerGroup = countParam(ctx, 'ctl_alerts_per_group');
    if (groups === undefined && alertsPerGroup === undefined) return sendAmJsonPieces(ctx, engine.groupsJson(q));
    const page: GroupsPage = {
      groups,
      alertsPerGroup,
      // The groups are made when the answer starts rendering, before anything is written.
      onTotals: (t) => {
        if (ctx.res.headersSent) return;
        ctx.res.setHeader('Ctl-Groups-Total', String(t.groups));
        ctx.res.setHeader('Ctl-Alerts-Total', String(t.alerts));
      },
    };
    return sendAmJsonPieces(ctx, engine.groupsJson(q, page));
  });

  router.get('/metrics', async (ctx) => {
    if (!deps.metrics) return sendText(ctx.res, 404, '404 page not found\n');
    const { text, contentType } = await deps.metrics.render();
    sendText(ctx.res, 200, text, contentType);
  });

  // Operational endpoints (outside the OpenAPI surface; plain text like Alertmanager's).
  const ok = (ctx: RequestContext) => sendText(ctx.res, 200, 'OK');
  router.on(['GET', 'HEAD'], '/-/healthy', ok);
  // A component whose configuration could not be loaded is down as a whole (the daemon answers 503).
  router.on(['GET', 'HEAD'], '/-/ready', (ctx) => ok(ctx));
  router.post('/-/reload', async (ctx) => {
    const err = await deps.reload();
    if (err !== undefined) return sendText(ctx.res, 500, `failed to reload config: ${err}\n`, 'text/plain; charset=utf-8', { 'X-Content-Type-Options': 'nosniff' });
    sendEmpty(ctx.res, 200);
  });
}

export { checkJsonContentType };
