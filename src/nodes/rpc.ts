import http from 'node:http';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import type { Egress } from '../egress/index.js';

// undici is loaded on first use, not at daemon start (as in src/egress); only https endpoints need it.
type Undici = typeof import('undici');
let undiciModule: Undici | undefined;
const undici = (): Undici => (undiciModule ??= createRequire(import.meta.url)('undici') as Undici);

/** Outcome of one JSON-RPC call to an NKN node (never throws). */
export type RpcOutcome =
  | { kind: 'ok'; result: unknown; body: Record<string, unknown> }
  | { kind: 'rpc-error'; code: number; message: string; data: Record<string, unknown>; body: Record<string, unknown> }
  | { kind: 'transport'; message: string }
  | { kind: 'decode'; message: string };

export interface RpcOptions {
  timeoutMs: number;
  /** Largest reply accepted (a neighbour list is ~150 KB). */
  maxBytes?: number;
}

type Raw = { kind: 'text'; text: string } | { kind: 'transport'; message: string } | { kind: 'decode'; message: string };

/** `http://IP:port/` for a node address. */
export function nodeUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}/`;
}

/**
 * POST `{"jsonrpc":"2.0","method":..,"params":..,"id":"1"}`. Nodes answer HTTP 200 even for
 * errors; the JSON-RPC envelope decides. Unknown fields are ignored.
 */
export async function rpcCall(egress: Egress, url: string, method: string, params: Record<string, unknown>, opts: RpcOptions): Promise<RpcOutcome> {
  const payload = JSON.stringify({ jsonrpc: '2.0', method, params, id: '1' });
  const maxBytes = opts.maxBytes ?? 4 << 20;
  const u = new URL(url);
  const raw = u.protocol === 'http:' ? await postPlain(egress, u, payload, opts.timeoutMs, maxBytes) : await postUndici(egress, u, payload, opts.timeoutMs, maxBytes);
  if (raw.kind !== 'text') return raw;
  return decodeRpc(raw.text);
}

export function decodeRpc(text: string): RpcOutcome {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (e) {
    return { kind: 'decode', message: `invalid JSON: ${(e as Error).message}` };
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { kind: 'decode', message: 'reply is not a JSON-RPC object' };
  const o = body as Record<string, unknown>;
  if (o.error !== undefined && o.error !== null) {
    const err = typeof o.error === 'object' ? (o.error as Record<string, unknown>) : { message: String(o.error) };
    const code = typeof err.code === 'number' ? err.code : Number(err.code);
    return {
      kind: 'rpc-error',
      code: Number.isFinite(code) ? code : 0,
      message: typeof err.message === 'string' ? err.message : '',
      data: err,
      body: o,
    };
  }
  if (!('result' in o)) return { kind: 'decode', message: 'reply has neither result nor error' };
  return { kind: 'ok', result: o.result, body: o };
}

/**
 * Plain HTTP on a socket opened by egress (its address map and loopback guard apply), one request
 * per connection as the origin polls. Much lighter than a pooled client when every node is a
 * different origin: nothing is kept per address between polls.
 */
function postPlain(egress: Egress, url: URL, payload: string, timeoutMs: number, maxBytes: number): Promise<Raw> {
  return new Promise<Raw>((resolve) => {
    let done = false;
    let sock: Socket | undefined;
    let req: http.ClientRequest | undefined;
    const finish = (r: Raw) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(r);
      req?.destroy();
      sock?.destroy();
    };
    const timer = setTimeout(() => finish({ kind: 'transport', message: `no reply within ${timeoutMs} ms` }), timeoutMs);
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const port = Number(url.port) || 80;
    egress.connect(host, port).then(
      (s) => {
        if (done) {
          s.destroy();
          return;
        }
        sock = s;
        // No `agent` option: with createConnection and no agent, node:http uses exactly this socket.
        req = http.request(
          {
            host,
            port,
            method: 'POST',
            path: url.pathname + url.search,
            createConnection: () => s,
            headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), connection: 'close' },
          },
          (res) => {
            const chunks: Buffer[] = [];
            let size = 0;
            res.on('data', (c: Buffer) => {
              size += c.length;
              if (size > maxBytes) finish({ kind: 'decode', message: `reply larger than ${maxBytes} bytes` });
              else chunks.push(c);
            });
            res.on('end', () => finish({ kind: 'text', text: Buffer.concat(chunks, size).toString('utf8') }));
            res.on('error', (e) => finish({ kind: 'transport', message: e.message }));
            res.on('aborted', () => finish({ kind: 'transport', message: 'connection closed mid-reply' }));
          },
        );
        req.on('error', (e) => finish({ kind: 'transport', message: e.message }));
        req.end(payload);
      },
      (e: Error) => finish({ kind: 'transport', message: e.message }),
    );
  });
}

/** HTTPS endpoints (a TLS balance RPC) go through the egress undici dispatcher. */
async function postUndici(egress: Egress, url: URL, payload: string, timeoutMs: number, maxBytes: number): Promise<Raw> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(new Error(`no reply within ${timeoutMs} ms`)), timeoutMs);
  try {
    const res = await undici().request(url, {
      method: 'POST',
      dispatcher: egress.dispatcher,
      headers: { 'content-type': 'application/json' },
      body: payload,
      signal: ac.signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) {
        res.body.destroy();
        return { kind: 'decode', message: `reply larger than ${maxBytes} bytes` };
      }
      chunks.push(chunk);
    }
    return { kind: 'text', text: Buffer.concat(chunks, size).toString('utf8') };
  } catch (e) {
    if (ac.signal.aborted) return { kind: 'transport', message: (ac.signal.reason as Error)?.message ?? 'timeout' };
    const err = e as Error & { cause?: Error };
    return { kind: 'transport', message: err.cause?.message ? `${err.message}: ${err.cause.message}` : err.message };
  } finally {
    clearTimeout(timer);
  }
}
