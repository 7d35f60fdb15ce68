import type http from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { parseDuration } from '../http/duration.js';
import type { DescriptorBudget } from './descriptor-budget.js';

/**
 * What a listener allows one client (ctl.yaml `servers.<name>`): slow, idle and too many connections
 * are shed, each with an HTTP answer where one can still be given, then a full close.
 */
export interface ConnectionLimits {
  /** Time to receive the request line and every header (`header-timeout`). */
  headerTimeoutMs: number;
  /** Time to receive the whole body once the headers are in (`body-timeout`); answers are not limited. */
  bodyTimeoutMs: number;
  /** How long an idle keep-alive connection is kept (`idle-timeout`). */
  idleTimeoutMs: number;
  /** Open connections on the listener (`max-connections`); 0 = no limit. */
  maxConnections: number;
  /** Open connections from one client address (`max-connections-per-ip`); 0 = no limit. */
  maxConnectionsPerIp: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  headerTimeoutMs: 10_000,
  bodyTimeoutMs: 60_000,
  idleTimeoutMs: 5_000,
  maxConnections: 4096,
  maxConnectionsPerIp: 256,
};

const DURATION_KEYS = { 'header-timeout': 'headerTimeoutMs', 'body-timeout': 'bodyTimeoutMs', 'idle-timeout': 'idleTimeoutMs' } as const;
const COUNT_KEYS = { 'max-connections': 'maxConnections', 'max-connections-per-ip': 'maxConnectionsPerIp' } as const;

/** The limits of one `servers.<name>` mapping; `where` names it in errors. */
export function parseConnectionLimits(s: Record<string, unknown>, where: string): ConnectionLimits {
  const out = { ...DEFAULT_CONNECTION_LIMITS };
  for (const [key, field] of Object.entries(DURATION_KEYS)) {
    if (s[key] === undefined) continue;
    const ms = parseDuration(s[key]);
    if (ms === null || ms <= 0) throw new Error(`${where}.${key}: ${JSON.stringify(s[key])} is not a positive duration (e.g. 10s, 500ms)`);
    out[field] = ms;
  }
  for (const [key, field] of Object.entries(COUNT_KEYS)) {
    if (s[key] === undefined) continue;
    const n = s[key];
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) throw new Error(`${where}.${key} must be a whole number (0: no limit)`);
    out[field] = n;
  }
  return out;
}

const REFUSED_503 = 'HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: 33\r\nRetry-After: 1\r\n\r\ntoo many connections, retry later';

/** Write the last words, then close both directions (a bare end() leaves a half-open socket). */
function closeWith(socket: Duplex, text: string | undefined): void {
  if (text !== undefined && socket.writable) socket.end(text, () => socket.destroy());
  else socket.destroy();
  // A peer that never reads must not keep the socket either.
  setTimeout(() => socket.destroy(), 1000).unref();
}

/** The answer to a request Node's parser gave up on. */
function clientErrorAnswer(err: NodeJS.ErrnoException): string {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n';
  if (err.code === 'HPE_HEADER_OVERFLOW') return 'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\nContent-Length: 0\r\n\r\n';
  return 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n';
}

/** The TCP socket under a request's socket (a TLS socket wraps it; Node keeps it as `_parent`). */
function rawSocket(s: Socket): Socket {
  return (s as Socket & { _parent?: Socket })._parent ?? s;
}

/**
 * Apply `limits` to a server. `tls`: over the caps the connection is closed without an answer
 * (there is no TLS session yet to answer in). `perIp`: false for the unix socket. `budget`: the
 * daemon's descriptors for TCP clients (descriptor-budget.ts), checked after the listener's own caps.
 */
export function applyConnectionLimits(server: http.Server, limits: ConnectionLimits, opts: { tls: boolean; perIp: boolean; budget?: DescriptorBudget }): void {
  server.headersTimeout = limits.headerTimeoutMs;
  // Node's request timeout runs from the first byte to the end of the body; it never cuts an answer.
  server.requestTimeout = limits.headerTimeoutMs + limits.bodyTimeoutMs;
  server.keepAliveTimeout = limits.idleTimeoutMs;
  // How often Node checks those two timeouts (its default, 30 s, would let a 10 s limit run to 40 s).
  // Read when the server starts listening.
  (server as unknown as { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.min(1000, Math.max(50, limits.headerTimeoutMs / 4));
  server.removeAllListeners('clientError');
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => closeWith(socket, clientErrorAnswer(err)));

  let open = 0;
  const perIp = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const ip = opts.perIp ? (socket.remoteAddress ?? '') : '';
    const fromIp = opts.perIp ? (perIp.get(ip) ?? 0) : 0;
    if ((limits.maxConnections > 0 && open >= limits.maxConnections) || (opts.perIp && limits.maxConnectionsPerIp > 0 && fromIp >= limits.maxConnectionsPerIp)) {
      closeWith(socket, opts.tls ? undefined : REFUSED_503);
      return;
    }
    if (opts.budget && !opts.budget.admit(socket)) {
      closeWith(socket, opts.tls ? undefined : REFUSED_503);
      return;
    }
    open++;
    if (opts.perIp) perIp.set(ip, fromIp + 1);
    socket.once('close', () => {
      open--;
      if (!opts.perIp) return;
      const left = (perIp.get(ip) ?? 1) - 1;
      if (left === 0) perIp.delete(ip);
      else perIp.set(ip, left);
    });
  });

  const budget = opts.budget;
  if (!budget) return;
  // What is idle and may be shed first: a connection with no request in flight.
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const socket = rawSocket(req.socket);
    budget.requestStarted(socket);
    res.once('close', () => budget.requestEnded(socket));
  });
  server.on('upgrade', (req: http.IncomingMessage) => budget.upgraded(rawSocket(req.socket)));
}
