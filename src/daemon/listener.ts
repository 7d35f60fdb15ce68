import http from 'node:http';
import https from 'node:https';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { existsSync, unlinkSync, chmodSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { TlsOptions } from 'node:tls';
import type { KeyPair } from './certificates.js';
import { applyConnectionLimits, DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from './connection-limits.js';
import type { DescriptorBudget } from './descriptor-budget.js';
import { endEventStreams } from '../http/sse.js';

export interface ListenerHandlers {
  request: (req: IncomingMessage, res: ServerResponse) => void;
  upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
}

/** One bound HTTP(S) server with connection tracking so it can drain on close. */
export class Listener {
  private readonly sockets = new Set<Socket>();
  private closing: Promise<void> | null = null;
  boundAddress = '';

  private constructor(
    readonly name: string,
    readonly address: string,
    readonly server: http.Server,
    readonly tls: boolean,
  ) {
    server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
    });
    server.on('secureConnection', (s: Socket) => {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
    });
  }

  /** Slow, idle and surplus clients are shed by `limits` (connection-limits.ts). */
  private static make(name: string, address: string, handlers: ListenerHandlers, tls: KeyPair | TlsOptions | null, limits: ConnectionLimits, perIp: boolean, budget?: DescriptorBudget): Listener {
    const server = tls ? https.createServer(tls) : http.createServer();
    server.on('request', handlers.request);
    server.on('upgrade', handlers.upgrade);
    applyConnectionLimits(server, limits, { tls: tls !== null, perIp, budget });
    return new Listener(name, address, server, tls !== null);
  }

  /**
   * Bind a TCP listener; rejects (without leaving anything open) when the address cannot be bound.
   * `budget`: the daemon's descriptors for TCP clients, shared by its TCP listeners.
   */
  static async tcp(
    name: string,
    host: string,
    port: number,
    address: string,
    handlers: ListenerHandlers,
    tls: KeyPair | TlsOptions | null,
    limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS,
    budget?: DescriptorBudget,
  ): Promise<Listener> {
    const l = Listener.make(name, address, handlers, tls, limits, true, budget);
    await new Promise<void>((resolve, reject) => {
      const onError = (e: Error) => reject(e);
      l.server.once('error', onError);
      l.server.listen({ host, port, exclusive: true }, () => {
        l.server.off('error', onError);
        resolve();
      });
    });
    const a = l.server.address() as AddressInfo;
    l.boundAddress = a.family === 'IPv6' ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;
    return l;
  }

  /**
   * Bind the control socket. A socket file nobody answers on (left by a crash) is replaced; one a
   * live process answers on makes start-up fail.
   */
  static async unix(name: string, path: string, handlers: ListenerHandlers, limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS, mode = 0o660): Promise<Listener> {
    if (existsSync(path)) {
      if (await answers(path)) throw new Error(`another daemon is already listening on ${path}`);
      unlinkSync(path);
    }
    const l = Listener.make(name, path, handlers, null, limits, false);
    await new Promise<void>((resolve, reject) => {
      l.server.once('error', reject);
      l.server.listen(path, () => {
        l.server.off('error', reject);
        resolve();
      });
    });
    chmodSync(path, mode);
    l.boundAddress = path;
    return l;
  }

  /** A web config's new certificate or TLS settings (SIGHUP), for connections from now on. */
  setTls(options: TlsOptions): void {
    if (this.tls) (this.server as https.Server).setSecureContext(options);
  }

  /**
   * Stop accepting now; let in-flight requests finish for up to `drainMs`, then cut what is left.
   * Idle keep-alive connections are closed at once.
   */
  close(drainMs: number): Promise<void> {
    if (this.closing) return this.closing;
    this.closing = new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeIdleConnections();
      // Event streams (console live views) never end by themselves: end them now, clients reconnect.
      endEventStreams(this.sockets);
      const tick = setInterval(() => this.server.closeIdleConnections(), 25);
      const cut = setTimeout(() => {
        for (const s of this.sockets) s.destroy();
      }, drainMs);
      cut.unref();
      this.server.once('close', () => {
        clearInterval(tick);
        clearTimeout(cut);
      });
    });
    return this.closing;
  }
}

function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(path);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}
