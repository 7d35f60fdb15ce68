import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A fake NKN network on one loopback port: it plays any number of nodes, told apart by the Host
 * header the client meant to reach (`203.0.113.7:30003` → node 203.0.113.7). The egress address
 * map sends the public-looking addresses here. Replies follow nknorg/nkn's JSON-RPC server:
 * HTTP 200 even for errors, `content-type: application/json;charset=utf-8`, a string request id
 * echoed (a numeric one becomes "1"), `getnodestate`, `getneighbor` and `getbalancebyaddr`.
 */

export type FakeMode =
  | 'online'
  /** Drops the connection without answering (like a refused or reset connection). */
  | 'offline'
  /** Accepts and never answers (timeouts). */
  | 'blackhole'
  /** Answers -45022: the node has no ID yet (the monitor shows GENERATING ID). */
  | 'error-45022'
  /** Answers -45024: DB service unavailable (the monitor shows PRUNING DB). */
  | 'error-45024'
  /** Answers a body that is not JSON. */
  | 'garbage'
  /** getnodestate works; getneighbor answers a JSON-RPC error. */
  | 'neighbor-error'
  /** getnodestate works; getneighbor answers garbage. */
  | 'neighbor-garbage'
  /** getnodestate works; getneighbor never answers. */
  | 'neighbor-blackhole';

export interface FakeClock {
  now(): number;
}

export interface FakeNodeSpec {
  mode: FakeMode;
  /** Reply latency in ms (real time). */
  delayMs: number;
  syncState: string;
  /** Start time on the fake's clock (ms): uptime counts from here. */
  startedAt: number;
  relaysPerSecond: number;
  /** Blocks behind the network height (a stuck node has a growing lag). */
  heightLag: number;
  /** When set, the node's height is frozen at this value. */
  frozenHeight?: number;
  publicKey: string;
  id: string;
  version: string;
  proposalSubmitted: number;
  /** Neighbour addresses (IPv4) returned by getneighbor. */
  neighbors: string[];
  /** Round-trip times (ms) of the neighbours, cycled. */
  roundTripTimes: number[];
  /** Extra result fields newer nodes send (ledgerMode, ...): the monitor must ignore them. */
  extra: Record<string, unknown>;
}

export interface FakeNknOptions {
  clock?: FakeClock;
  /** Defaults for every node not configured with setNode(). */
  defaults?: Partial<FakeNodeSpec>;
  /** Network height at `genesisMs`, and seconds per block after it. */
  baseHeight?: number;
  genesisMs?: number;
  blockTimeSec?: number;
}

const hex = (s: string) => createHash('sha256').update(s).digest('hex');

export class FakeNknNetwork {
  readonly clock: FakeClock;
  private server?: http.Server;
  private readonly sockets = new Set<Socket>();
  private readonly nodes = new Map<string, Partial<FakeNodeSpec>>();
  private readonly defaults: Partial<FakeNodeSpec>;
  readonly balances = new Map<string, string>();
  /** Every request: the node address it was meant for and the JSON-RPC method. */
  readonly requests: { ip: string; host: string; method: string }[] = [];
  readonly baseHeight: number;
  readonly genesisMs: number;
  readonly blockTimeSec: number;
  /** Keep the request log (turn off for benchmarks). */
  recordRequests = true;
  /** Requests being answered now, and the most ever at once (to check the poller's concurrency bound). */
  inFlight = 0;
  maxInFlight = 0;
  /** Requests received in total. */
  total = 0;
  port = 0;

  constructor(opts: FakeNknOptions = {}) {
    this.clock = opts.clock ?? { now: () => Date.now() };
    this.defaults = opts.defaults ?? {};
    this.baseHeight = opts.baseHeight ?? 3_000_000;
    this.genesisMs = opts.genesisMs ?? this.clock.now();
    this.blockTimeSec = opts.blockTimeSec ?? 20;
  }

  async start(): Promise<this> {
    this.server = http.createServer({ keepAlive: true }, (req, res) => this.handle(req, res));
    this.server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    this.server.maxConnections = 20_000;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** `127.0.0.1:<port>`, the target for egress address-map entries. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Address-map entries sending `ip:port` of every given address here. */
  addressMap(ips: readonly string[], port = 30003): Record<string, string> {
    return Object.fromEntries(ips.map((ip) => [`${ip}:${port}`, this.address]));
  }

  setNode(ip: string, spec: Partial<FakeNodeSpec> = {}): this {
    this.nodes.set(ip, { ...this.nodes.get(ip), ...spec });
    return this;
  }

  setMode(ip: string, mode: FakeMode): this {
    return this.setNode(ip, { mode });
  }

  /** The node restarts now: uptime and relay count start again from zero. */
  restart(ip: string): this {
    return this.setNode(ip, { startedAt: this.clock.now() });
  }

  /** The full spec a node answers with. */
  spec(ip: string): FakeNodeSpec {
    const s = { ...this.defaults, ...this.nodes.get(ip) };
    return {
      mode: s.mode ?? 'online',
      delayMs: s.delayMs ?? 0,
      syncState: s.syncState ?? 'PERSIST_FINISHED',
      startedAt: s.startedAt ?? this.genesisMs - 86_400_000,
      relaysPerSecond: s.relaysPerSecond ?? 10,
      heightLag: s.heightLag ?? 0,
      frozenHeight: s.frozenHeight,
      publicKey: s.publicKey ?? hex(`pk:${ip}`),
      id: s.id ?? hex(`id:${ip}`),
      version: s.version ?? 'v2.2.1',
      proposalSubmitted: s.proposalSubmitted ?? 0,
      neighbors: s.neighbors ?? [],
      roundTripTimes: s.roundTripTimes ?? [50, 120, 300],
      extra: s.extra ?? {},
    };
  }

  networkHeight(now = this.clock.now()): number {
    return this.baseHeight + Math.floor((now - this.genesisMs) / 1000 / this.blockTimeSec);
  }

  /** The getnodestate result a node would give now. */
  nodeState(ip: string): Record<string, unknown> {
    const s = this.spec(ip);
    const now = this.clock.now();
    const uptime = Math.max(0, Math.floor((now - s.startedAt) / 1000));
    const dashed = ip.replaceAll('.', '-');
    return {
      addr: `tcp://${ip}:30001`,
      currTimeStamp: Math.floor(now / 1000),
      height: s.frozenHeight ?? this.networkHeight(now) - s.heightLag,
      id: s.id,
      jsonRpcPort: 30003,
      proposalSubmitted: s.proposalSubmitted,
      protocolVersion: 40,
      publicKey: s.publicKey,
      relayMessageCount: Math.floor(uptime * s.relaysPerSecond),
      syncState: s.syncState,
      tlsJsonRpcDomain: `${dashed}.ipv4.staticdns3.io`,
      tlsJsonRpcPort: 30005,
      tlsWebsocketDomain: `${dashed}.ipv4.staticdns3.io`,
      tlsWebsocketPort: 30004,
      uptime,
      version: s.version,
      websocketPort: 30002,
      ...s.extra,
    };
  }

  neighborList(ip: string): Record<string, unknown>[] {
    const s = this.spec(ip);
    return s.neighbors.map((n, i) => ({
      addr: `tcp://${n}:30001`,
      id: this.spec(n).id,
      publicKey: this.spec(n).publicKey,
      height: this.networkHeight(),
      isOutbound: i % 2 === 0,
      roundTripTime: s.roundTripTimes[i % s.roundTripTimes.length],
      connTime: 3600,
      syncState: this.spec(n).syncState,
      protocolVersion: 40,
      websocketPort: 30002,
      jsonRpcPort: 30003,
      tlsWebsocketDomain: `${n.replaceAll('.', '-')}.ipv4.staticdns3.io`,
      tlsWebsocketPort: 30004,
      tlsJsonRpcDomain: `${n.replaceAll('.', '-')}.ipv4.staticdns3.io`,
      tlsJsonRpcPort: 30005,
    }));
  }

  /** How many requests a node received (optionally of one method). */
  hits(ip: string, method?: string): number {
    return this.requests.filter((r) => r.ip === ip && (method === undefined || r.method === method)).length;
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const host = req.headers.host ?? '';
    this.total++;
    this.inFlight++;
    if (this.inFlight > this.maxInFlight) this.maxInFlight = this.inFlight;
    let done = false;
    const finish = () => {
      if (!done) {
        done = true;
        this.inFlight--;
      }
    };
    res.on('close', finish);
    const ip = host.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: { method?: unknown; id?: unknown; params?: unknown } | undefined;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
      } catch {
        body = undefined;
      }
      const method = typeof body?.method === 'string' ? body.method : '';
      if (this.recordRequests) this.requests.push({ ip, host, method });
      const spec = this.spec(ip);
      const mode = spec.mode;
      if (mode === 'offline') {
        req.socket.destroy();
        return;
      }
      if (mode === 'blackhole' || (mode === 'neighbor-blackhole' && method === 'getneighbor')) return;
      const id = typeof body?.id === 'string' ? body.id : '1';
      const send = (payload: string) => {
        const write = () => {
          if (res.destroyed) return;
          res.writeHead(200, { 'content-type': 'application/json;charset=utf-8', 'access-control-allow-origin': '*' });
          res.end(payload);
        };
        if (spec.delayMs > 0) setTimeout(write, spec.delayMs);
        else write();
      };
      const result = (r: unknown) => send(JSON.stringify({ id, jsonrpc: '2.0', result: r }));
      const error = (code: number, message: string, extra: Record<string, unknown> = {}) =>
        send(JSON.stringify({ id, jsonrpc: '2.0', error: { code, message, ...extra } }));
      if (!body) return error(-42004, 'INVALID JSON');
      if (mode === 'garbage') return send('<html>502 Bad Gateway</html>');
      if (mode === 'error-45022') {
        return error(-45022, 'No ID in this account, waiting for generate ID fee or generate ID transaction', {
          publicKey: spec.publicKey,
          walletAddress: `NKN${spec.publicKey.slice(0, 33)}`,
        });
      }
      if (mode === 'error-45024') return error(-45024, 'INTERNAL ERROR, DB service is unavailable');
      switch (method) {
        case 'getnodestate':
          return result(this.nodeState(ip));
        case 'getneighbor':
          if (mode === 'neighbor-error') return error(-43001, 'INTERNAL ERROR');
          if (mode === 'neighbor-garbage') return send('{"id":"1","jsonrpc":"2.0","result":[{"addr":');
          return result(this.neighborList(ip));
        case 'getbalancebyaddr': {
          const params = (body.params ?? {}) as { address?: unknown };
          const amount = typeof params.address === 'string' ? this.balances.get(params.address) : undefined;
          return result({ amount: amount ?? '0' });
        }
        default:
          return error(-42001, 'INVALID METHOD');
      }
    });
  }
}
