/**
 * `upstreamBuffered` (undici dispatch with a handler collecting the body) must answer exactly as the
 * path it replaced for whole answers did: `upstreamRequest` (undici request, a Readable body), then
 * `httpError` for non-2xx or `readText` for 2xx. Each case runs both against a scripted raw HTTP
 * server on loopback and compares what the caller sees (status, headers, text, or the UpstreamError).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Egress } from '../../src/egress/index.js';
import { RequestAbort } from '../../src/gateway/abort.js';
import { UpstreamError } from '../../src/gateway/providers/errors.js';
import {
  httpError,
  httpErrorOf,
  readText,
  upstreamBuffered,
  upstreamRequest,
  type UpstreamRequestInit,
} from '../../src/gateway/providers/http.js';

/** What one scripted connection does with the request it reads. */
type Script = (socket: net.Socket) => void;

const egress = new Egress({ loopbackOnly: true });
let server: net.Server;
let port = 0;
const scripts = new Map<string, Script>();
/** Connections the client closed while their answer was unfinished. */
let aborted = 0;

beforeAll(async () => {
  server = net.createServer((socket) => {
    let buf = '';
    socket.on('error', () => undefined);
    let waiting = false;
    socket.on('close', () => {
      if (waiting) aborted++;
    });
    socket.on('data', (c) => {
      buf += c.toString('latin1');
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const path = /^\w+ (\S+)/.exec(buf)![1]!;
      const len = Number(/content-length: (\d+)/i.exec(buf)?.[1] ?? 0);
      if (buf.length < end + 4 + len) return;
      buf = '';
      // The scripts that never finish their answer: the client is the one to close.
      waiting = path === '/hang' || path === '/stall';
      scripts.get(path)!(socket);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await egress.close();
  await new Promise((r) => server.close(r));
});

function head(status: string, headers: string[], length?: number): string {
  return `HTTP/1.1 ${status}\r\n${headers.map((h) => `${h}\r\n`).join('')}${length !== undefined ? `Content-Length: ${length}\r\n` : ''}\r\n`;
}

const SCRIPTS: Record<string, Script> = {
  ok: (s) => s.write(head('200 OK', ['Content-Type: application/json'], 10) + '{"a":"xx"}'),
  repeated: (s) => s.write(head('200 OK', ['X-A: 1', 'x-a: 2', 'Set-Cookie: a=1', 'Set-Cookie: b=2', 'X-Empty:'], 2) + '{}'),
  informational: (s) => s.write(head('103 Early Hints', ['Link: </a>; rel=preload']) + head('200 OK', [], 2) + '{}'),
  utf8Split: (s) => {
    const body = Buffer.from('{"t":"h\u00e9llo \u2603"}');
    s.write(head('200 OK', [], body.length));
    s.write(body.subarray(0, 8));
    setTimeout(() => s.write(body.subarray(8)), 20);
  },
  serverError: (s) => {
    const body = '{"error":{"message":"slow down","type":"rate_limit"}}';
    s.write(head('429 Too Many Requests', ['Retry-After: 3'], body.length) + body);
  },
  hugeError: (s) => {
    const body = 'x'.repeat(300 * 1024);
    s.write(head('500 Internal Server Error', [], body.length) + body);
  },
  cutOff: (s) => {
    s.write(head('200 OK', [], 100) + '{"partial":');
    setTimeout(() => s.destroy(), 20);
  },
  cutOffError: (s) => {
    s.write(head('502 Bad Gateway', [], 100) + '{"error":');
    setTimeout(() => s.destroy(), 20);
  },
  hang: () => undefined,
  stall: (s) => s.write(head('200 OK', [], 100) + '{"a":'),
  big: (s) => {
    const body = JSON.stringify({ t: 'y'.repeat(5000) });
    s.write(head('200 OK', [], body.length) + body);
  },
  chunked: (s) => s.write(head('200 OK', ['Transfer-Encoding: chunked']) + '3\r\n{"a\r\n4\r\n":1}\r\n0\r\n\r\n'),
};
for (const [k, v] of Object.entries(SCRIPTS)) scripts.set(`/${k}`, v);

type Seen =
  | { ok: true; status: number; headers: Record<string, string>; text: string }
  | { ok: false; kind: string; message: string; status: number; retryAfterMs?: number; upstreamMessage?: string; headers?: Record<string, string> };

function seenError(e: unknown): Seen {
  if (!(e instanceof UpstreamError)) throw e;
  return {
    ok: false,
    kind: e.kind,
    message: e.message.replace(/:\d+/g, ':PORT'),
    status: e.status,
    ...(e.retryAfterMs !== undefined ? { retryAfterMs: e.retryAfterMs } : {}),
    ...(e.upstreamMessage !== undefined ? { upstreamMessage: e.upstreamMessage } : {}),
    ...(e.headers ? { headers: withoutDate(e.headers) } : {}),
  };
}

function withoutDate(h: Record<string, string>): Record<string, string> {
  const { date: _d, ...rest } = h;
  return rest;
}

const NOW = 1_700_000_000_000;

/** The old path: request(), then httpError for non-2xx, readText for 2xx. */
async function before(url: string, init: UpstreamRequestInit, maxBytes?: number): Promise<Seen> {
  try {
    const res = await upstreamRequest(url, init);
    if (res.status < 200 || res.status > 299) return seenError(await httpError(res, init.signal ?? new RequestAbort(), NOW));
    const text = await readText(res, init.signal ?? new RequestAbort(), maxBytes);
    return { ok: true, status: res.status, headers: withoutDate(res.headers), text };
  } catch (e) {
    return seenError(e);
  }
}

/** The new path. */
async function after(url: string, init: UpstreamRequestInit, maxBytes?: number): Promise<Seen> {
  try {
    const res = await upstreamBuffered(url, init, maxBytes);
    if (res.status < 200 || res.status > 299) return seenError(httpErrorOf(res.status, res.headers, res.text, NOW));
    return { ok: true, status: res.status, headers: withoutDate(res.headers), text: res.text };
  } catch (e) {
    return seenError(e);
  }
}

function init(extra: Partial<UpstreamRequestInit> = {}): UpstreamRequestInit {
  return { headers: { 'content-type': 'application/json' }, body: '{"q":1}', egress, headersTimeoutMs: 5000, bodyTimeoutMs: 5000, ...extra };
}

async function both(path: string, make: () => UpstreamRequestInit = () => init(), maxBytes?: number): Promise<Seen> {
  const url = `http://127.0.0.1:${port}${path}`;
  const a = await before(url, make(), maxBytes);
  const b = await after(url, make(), maxBytes);
  expect(b).toEqual(a);
  return b;
}

describe('upstreamBuffered answers as request() + readText did', () => {
  it('a plain JSON answer', async () => {
    expect(await both('/ok')).toMatchObject({ ok: true, status: 200, headers: { 'content-type': 'application/json' }, text: '{"a":"xx"}' });
  });

  it('repeated headers are joined; informational answers are skipped; chunked and split UTF-8 bodies decode', async () => {
    const r = await both('/repeated');
    expect(r).toMatchObject({ ok: true, headers: { 'x-a': '1, 2', 'set-cookie': 'a=1, b=2' } });
    expect(await both('/informational')).toMatchObject({ ok: true, status: 200, text: '{}' });
    expect(await both('/utf8Split')).toMatchObject({ ok: true, text: '{"t":"h\u00e9llo \u2603"}' });
    expect(await both('/chunked')).toMatchObject({ ok: true, text: '{"a":1}' });
  });

  it('an error status keeps its message and Retry-After; a huge or cut-off error body leaves only the status', async () => {
    expect(await both('/serverError')).toMatchObject({ ok: false, kind: 'http', status: 429, upstreamMessage: 'slow down', retryAfterMs: 3000 });
    expect(await both('/hugeError')).toMatchObject({ ok: false, kind: 'http', status: 500, message: 'upstream returned 500: HTTP 500' });
    expect(await both('/cutOffError')).toMatchObject({ ok: false, kind: 'http', status: 502 });
  });

  it('a 2xx body cut off or larger than the limit fails', async () => {
    expect(await both('/cutOff')).toMatchObject({ ok: false, kind: 'connection' });
    expect(await both('/big', () => init(), 1000)).toMatchObject({ ok: false, kind: 'garbage', message: 'upstream body larger than 1000 bytes' });
  });

  it('header and body timeouts', async () => {
    expect(await both('/hang', () => init({ headersTimeoutMs: 100 }))).toMatchObject({ ok: false, kind: 'timeout', status: 504 });
    expect(await both('/stall', () => init({ bodyTimeoutMs: 100 }))).toMatchObject({ ok: false, kind: 'timeout', message: expect.stringMatching(/^upstream body: /) });
  });

  it('an abort before the answer, during the body, or before the call', async () => {
    const abortLater = (ms: number) => () => {
      const a = new RequestAbort();
      setTimeout(() => a.abort(), ms);
      return init({ signal: a });
    };
    const was = aborted;
    expect(await both('/hang', abortLater(50))).toMatchObject({ ok: false, kind: 'aborted' });
    expect(await both('/stall', abortLater(50))).toMatchObject({ ok: false, kind: 'aborted', message: 'upstream body: request aborted' });
    await expect.poll(() => aborted - was, { timeout: 2000 }).toBeGreaterThanOrEqual(4);
    const reason = new UpstreamError('timeout', 'combo deadline');
    const early = () => {
      const a = new RequestAbort();
      a.abort(reason);
      return init({ signal: a });
    };
    expect(await both('/ok', early)).toMatchObject({ ok: false, kind: 'timeout', message: 'combo deadline' });
  });

  it('refused connections and destinations', async () => {
    expect(await both('/ok', () => init())).toMatchObject({ ok: true });
    const url = 'http://127.0.0.1:1/x';
    const a = await before(url, init());
    expect(await after(url, init())).toEqual(a);
    expect(a).toMatchObject({ ok: false, kind: 'connection' });
    const far = 'http://192.0.2.1:9/x';
    const b = await before(far, init());
    expect(await after(far, init())).toEqual(b);
    expect(b).toMatchObject({ ok: false, kind: 'connection', message: expect.stringMatching(/egress refused/) });
  });
});
