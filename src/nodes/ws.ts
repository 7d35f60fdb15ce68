import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocketServer, WebSocket, RawData } from 'ws';
import { MAX_JSON_DEPTH, jsonDeeperThan } from '../http/json-depth.js';
import { lazyRequire } from '../http/lazy.js';
import type { RequestContext } from '../http/context.js';
import { fanout, isMethod, METHODS, runMethod } from './api.js';
import { Code } from './codes.js';
import { reply, toJson } from './envelope.js';
import { clientKey } from './http-api.js';
import type { Peer } from './hub.js';
import type { Services } from './service.js';
import { isPlainObject } from './values.js';

const wsLib = lazyRequire<typeof import('ws')>('ws');
/** WebSocket.OPEN (the ws package is loaded on the first upgrade, not at daemon start). */
const OPEN = 1;

/**
 * The WebSocket session at `GET /polling` (text frames of `{Method, Value}`, replies as envelopes).
 *  - Heartbeat: the client sends `1`, the server answers `2`. After `read-timeout` seconds without a
 *    frame the server sends `1` itself and closes unless something arrives within `pong-timeout`.
 *  - At most `max-per-ip` sessions per client IP: the next gets code 1002 (Method `other`) and is closed.
 *  - A session starts unauthorised; `auth {Hash}` binds it to an account, `logout` unbinds it.
 *    An auth-only method before that answers 253 and the session stays open. A frame that is not
 *    JSON, or names an unknown method, closes the session without a reply (as the origin does).
 *  - Frames are handled in order, one at a time per session; heartbeats are answered at once.
 */
const MAX_BUFFERED = 16 << 20;

export class WsSessions {
  private server?: WebSocketServer;
  private readonly sockets = new Set<WebSocket>();

  constructor(private readonly s: Services) {}

  private get wss(): WebSocketServer {
    return (this.server ??= new (wsLib().WebSocketServer)({ noServer: true, maxPayload: this.s.config.websocket.maxPayload, perMessageDeflate: false }));
  }

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, ctx: RequestContext): void {
    if (ctx.url.pathname !== '/polling' || req.method !== 'GET') {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.session(ws, clientKey(ctx)));
  }

  /** Number of open sessions (for tests and status). */
  get size(): number {
    return this.sockets.size;
  }

  close(): void {
    for (const ws of this.sockets) ws.terminate();
    this.sockets.clear();
    this.server?.close();
  }

  private session(ws: WebSocket, ip: string): void {
    const { hub, config, log } = this.s;
    if (!hub.acquire(ip, config.websocket.maxPerIp)) {
      ws.send(toJson(reply('other', Code.CONN_LIMIT)), () => ws.close(1008, 'connections limit reached'));
      return;
    }
    this.sockets.add(ws);
    const peer: Peer = {
      accountId: undefined,
      send: (text) => {
        if (ws.readyState !== OPEN) return;
        // A client that stopped reading is dropped rather than buffered without bound.
        if (ws.bufferedAmount > MAX_BUFFERED) return void ws.terminate();
        ws.send(text);
      },
    };
    const readMs = config.websocket.readTimeout * 1000;
    const pongMs = config.websocket.pongTimeout * 1000;
    let idle: NodeJS.Timeout | undefined;
    let pong: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(idle);
      clearTimeout(pong);
      pong = undefined;
      idle = setTimeout(() => {
        peer.send('1');
        pong = setTimeout(() => ws.terminate(), pongMs);
      }, readMs);
    };
    arm();

    let queue: Promise<void> = Promise.resolve();
    ws.on('message', (data: RawData, isBinary: boolean) => {
      arm();
      const text = isBinary ? '' : rawText(data);
      if (text === '1') return peer.send('2');
      if (text === '2') return;
      queue = queue.then(() => this.frame(ws, peer, ip, text)).catch((e: unknown) => {
        log.error({ err: e }, 'websocket frame failed');
        ws.close(1011);
      });
    });
    ws.on('close', () => {
      clearTimeout(idle);
      clearTimeout(pong);
      this.sockets.delete(ws);
      hub.unbind(peer);
      hub.release(ip);
    });
    ws.on('error', (e) => log.debug({ err: e }, 'websocket error'));
  }

  private async frame(ws: WebSocket, peer: Peer, ip: string, text: string): Promise<void> {
    if (ws.readyState !== OPEN) return;
    let q: unknown;
    try {
      q = jsonDeeperThan(text, MAX_JSON_DEPTH) ? undefined : JSON.parse(text);
    } catch {
      q = undefined;
    }
    if (!isPlainObject(q) || typeof q.Method !== 'string' || !isMethod(q.Method) || (q.Value != null && !isPlainObject(q.Value))) {
      ws.close(1003, 'unsupported frame');
      return;
    }
    const method = q.Method;
    if (METHODS[method]!.auth && peer.accountId === undefined) {
      peer.send(toJson(reply(method, Code.NO_AUTH)));
      return;
    }
    const value = { ...((q.Value as Record<string, unknown> | null | undefined) ?? {}) };
    if (METHODS[method]!.auth) delete value.Hash;
    const call = { method, value, form: false, accountId: peer.accountId, client: ip, peer };
    const r = await runMethod(this.s, call);
    peer.send(toJson(r));
    fanout(this.s, call, r);
  }
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('utf8');
  return data.toString('utf8');
}
