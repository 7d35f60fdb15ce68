/**
 * Hostile input for every API, from a seeded generator: truncated and deeply nested JSON, wrong
 * types, huge strings, invalid UTF-8, wrong content types, traversal and garbage in path ids,
 * RE2-hostile matchers and filters, multipart garbage. Every answer must be a 4xx (or a 2xx when the
 * input happened to be fine): never a 5xx, never a hang, never a crash, and the daemon's memory must
 * stay bounded. A failure prints the seed; `CTL_HOSTILE_SEED=<seed> npx vitest run test/hostile`
 * replays it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { rng } from '../helpers/rng.js';

const SEED = Number(process.env.CTL_HOSTILE_SEED ?? Math.floor(Math.random() * 2 ** 31));
const REQUESTS = 2400;
const CONCURRENCY = Number(process.env.CTL_HOSTILE_CONCURRENCY ?? 8);
const TIMEOUT_MS = 10_000;
const RSS_LIMIT_MB = 700;


/** [host, method, path template]: `:x` is an id, `*` a model path. */
const ROUTES: [string, string, string][] = [
  ['alertmanager', 'GET', '/api/v2/status'],
  ['alertmanager', 'GET', '/api/v2/alerts'],
  ['alertmanager', 'POST', '/api/v2/alerts'],
  ['alertmanager', 'GET', '/api/v2/alerts/groups'],
  ['alertmanager', 'GET', '/api/v2/silences'],
  ['alertmanager', 'POST', '/api/v2/silences'],
  ['alertmanager', 'GET', '/api/v2/silence/:x'],
  ['alertmanager', 'DELETE', '/api/v2/silence/:x'],
  ['alertmanager', 'GET', '/api/v2/receivers'],
  ['core', 'GET', '/core/1.0'],
  ['core', 'PATCH', '/core/1.0/daemon/config'],
  ['core', 'GET', '/core/1.0/ratelimit'],
  ['gateway', 'POST', '/v1/chat/completions'],
  ['gateway', 'POST', '/v1/messages'],
  ['gateway', 'POST', '/v1/messages/count_tokens'],
  ['gateway', 'POST', '/v1/responses'],
  ['gateway', 'POST', '/v1/embeddings'],
  ['gateway', 'GET', '/v1/models'],
  ['gateway', 'GET', '/v1/models/*'],
  ['gateway', 'POST', '/v1beta/models/*'],
  ['gateway', 'POST', '/v1/providers/:x/chat/completions'],
  ['gateway', 'POST', '/api/auth/login'],
  ['gateway', 'POST', '/api/providers'],
  ['gateway', 'PATCH', '/api/providers/:x'],
  ['gateway', 'DELETE', '/api/providers/:x'],
  ['gateway', 'POST', '/api/providers/import'],
  ['gateway', 'POST', '/api/providers/bulk'],
  ['gateway', 'POST', '/api/providers/validate'],
  ['gateway', 'POST', '/api/combos'],
  ['gateway', 'PATCH', '/api/combos/:x'],
  ['gateway', 'POST', '/api/model-combo-mappings'],
  ['gateway', 'POST', '/api/models/alias'],
  ['gateway', 'POST', '/api/provider-models'],
  ['gateway', 'POST', '/api/keys'],
  ['gateway', 'PATCH', '/api/keys/:x'],
  ['gateway', 'POST', '/api/pricing'],
  ['gateway', 'POST', '/api/usage/budget'],
  ['gateway', 'POST', '/api/usage/token-limits'],
  ['gateway', 'GET', '/api/usage/request-logs'],
  ['gateway', 'GET', '/api/usage/history'],
  ['gateway', 'PATCH', '/api/cache'],
  ['gateway', 'PATCH', '/api/resilience'],
  ['gateway', 'POST', '/api/admin/concurrency'],
  ['pipeline', 'POST', '/api/auth/login'],
  ['pipeline', 'GET', '/api/posts'],
  ['pipeline', 'GET', '/api/posts/:x'],
  ['pipeline', 'PATCH', '/api/posts/:x'],
  ['pipeline', 'POST', '/api/posts/:x/image'],
  ['pipeline', 'GET', '/api/uploads/:x'],
  ['pipeline', 'POST', '/api/sources'],
  ['pipeline', 'PATCH', '/api/sources/:x'],
  ['pipeline', 'POST', '/api/categories'],
  ['pipeline', 'PUT', '/api/style'],
  ['pipeline', 'PUT', '/api/settings/model'],
  ['pipeline', 'GET', '/api/pipeline/runs/:x'],
  ['pipeline', 'GET', '/api/analytics'],
  ['pipeline', 'GET', '/api/activity'],
  ['nodes', 'POST', '/api'],
  ['nodes', 'POST', '/api/:x'],
];

const NODE_METHODS = ['genid', 'getdaemon', 'addnodes', 'getmynodes', 'rmnodes', 'getnodedetails', 'getnetstatus', 'getmywallets', 'savemysettings', 'getprices', 'getlanguage', 'nope'];

interface Req {
  host: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

/** The generator: one hostile request from the PRNG. */
function generator(r: () => number) {
  const int = (n: number) => Math.floor(r() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const nested = (depth: number) => (r() < 0.5 ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth));
  const hostileString = () =>
    pick([
      '',
      'x'.repeat(int(3) === 0 ? 1_000_000 : 10_000),
      '\u0000\u0001\ud800',
      '../../../../etc/passwd',
      '(a+)+$',
      '\\Qx',
      '(?<n>x)',
      '[',
      '%00',
      '🙂'.repeat(100),
      'a'.repeat(300) + '{{ .X }}',
    ]);
  const scalar = (): unknown => pick([null, true, -1, 0, 1e308, -0, 2 ** 53 + 1, hostileString(), [], {}, [null], { '': null }]);
  /** A body shaped like the real ones with hostile values. */
  const shaped = (): unknown => {
    const fields = ['model', 'messages', 'input', 'labels', 'annotations', 'matchers', 'startsAt', 'endsAt', 'createdBy', 'comment', 'id', 'name', 'kind', 'base_url', 'targets', 'pattern', 'password', 'Method', 'Value', 'Hash', 'Ip', 'status', 'content', 'url', 'servers', 'failure-domain', 'expiresAt', 'priority', 'models', 'apiKeys'];
    const o: Record<string, unknown> = {};
    for (let i = 0, n = 1 + int(6); i < n; i++) {
      const f = pick(fields);
      o[f] = r() < 0.3 ? { [pick(fields)]: scalar() } : r() < 0.2 ? [scalar(), { name: hostileString(), value: hostileString(), isRegex: r() < 0.5 }] : scalar();
    }
    if (r() < 0.5) o.Method = pick(NODE_METHODS);
    return r() < 0.3 ? [o, o] : o;
  };
  const body = (): { body: Buffer; type: string } => {
    switch (int(9)) {
      case 0:
        return { body: Buffer.from(JSON.stringify(shaped()).slice(0, 1 + int(40))), type: 'application/json' }; // truncated
      case 1:
        return { body: Buffer.from(nested(pick([100, 300, 2000, 20_000]))), type: 'application/json' };
      case 2:
        return { body: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d]), type: 'application/json' }; // bad UTF-8
      case 3:
        return { body: Buffer.from(JSON.stringify(shaped())), type: pick(['text/plain', 'application/x-www-form-urlencoded', 'application/xml', '']) };
      case 4: {
        const b = 'hostileBoundary';
        const text = `--${b}\r\nContent-Disposition: form-data; name="file"; filename="x.png"\r\nContent-Type: image/png\r\n\r\n\x89PNG${'\0'.repeat(int(2000))}`;
        return { body: Buffer.from(r() < 0.5 ? text : text + `\r\n--${b}--\r\n`), type: pick([`multipart/form-data; boundary=${b}`, 'multipart/form-data', `multipart/form-data; boundary=other`]) };
      }
      case 5:
        return { body: Buffer.from('{"a":1e400,"b":-1e999,"model":1e400}'), type: 'application/json' };
      case 6:
        return { body: Buffer.alloc(int(4096), int(256)), type: pick(['application/json', 'application/octet-stream']) };
      default:
        return { body: Buffer.from(JSON.stringify(shaped())), type: 'application/json' };
    }
  };
  const id = () =>
    pick(['1', '-1', '0', '99999999999999999999', '..%2F..%2Fdatabase%2Fpipeline.db', '%2e%2e', '%00', 'x'.repeat(5000), '%F0%9F%99%82', '%ff%fe', 'a%2Fb', encodeURIComponent(hostileString().slice(0, 200).replace(/[\ud800-\udfff]/g, '?'))]);
  const query = () =>
    pick([
      '',
      `?filter=${encodeURIComponent(pick(['alertname=~"(a+)+$"', 'a=~"\\\\Qx"', 'a=~"("', '{', 'a=~"(?<n>x)"', 'x'.repeat(10_000)]))}`,
      '?limit=-1&offset=1e400&page=abc&page_size=999999999',
      `?receiver=${encodeURIComponent('(a|a)*b')}&silenced=maybe&active=2`,
      '?a=1&a=2&' + 'k=v&'.repeat(500),
      '?%zz=%zz',
    ]);
  return (): Req => {
    const [host, method, template] = pick(ROUTES);
    const path = template.replace(/:x/g, id).replace('*', () => pick(['m', 'oa/m1:generateContent', '%2e%2e/x', 'x'.repeat(3000)])) + query();
    const req: Req = { host, method, path, headers: {} };
    if (method !== 'GET' && method !== 'DELETE' || r() < 0.2) {
      const b = body();
      req.body = b.body;
      // Node's client sends a GET or DELETE body with no length at all; the server would read it as the next request.
      req.headers['content-length'] = String(b.body.length);
      if (b.type) req.headers['content-type'] = b.type;
    }
    return req;
  };
}

function send(socket: string, req: Req): Promise<{ status: number; ms: number }> {
  // A fresh keep-alive connection per request, as most clients send: never reused (a socket the
  // server just closed would fail the client, not the server), never asking the server to close.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  return new Promise<{ status: number; ms: number }>((resolve, reject) => {
    const t0 = performance.now();
    const r = http.request({ socketPath: socket, agent, method: req.method, path: req.path, headers: { host: req.host, ...req.headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t0 }));
      res.on('error', reject);
    });
    r.setTimeout(TIMEOUT_MS, () => r.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
    r.on('error', reject);
    r.end(req.body);
  }).finally(() => agent.destroy());
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

describe(`hostile input (seed ${SEED}; replay with CTL_HOSTILE_SEED=${SEED})`, () => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startDaemon({ ctlYaml: { pipeline: { 'owner-password': 'hostile-owner' } } });
  });
  afterAll(async () => {
    await d?.cleanup();
  });

  it(`${REQUESTS} generated requests across every API: no 5xx, no hang, no crash, bounded memory`, async () => {
    const next = generator(rng(SEED));
    const failures: string[] = [];
    let sent = 0;
    const worker = async () => {
      while (sent < REQUESTS && failures.length < 10) {
        const req = next();
        sent++;
        try {
          const { status } = await send(d.socket, req);
          if (status >= 500) failures.push(`${status} ${req.method} http://${req.host}${req.path.slice(0, 200)} (${req.headers['content-type'] ?? 'no type'}, ${req.body?.length ?? 0} bytes: ${req.body?.subarray(0, 80).toString('latin1') ?? ''})`);
        } catch (e) {
          failures.push(`${(e as Error).message}: ${req.method} http://${req.host}${req.path.slice(0, 200)} (${req.headers['content-type'] ?? 'no type'}, ${req.body?.length ?? 0} bytes: ${req.body?.subarray(0, 80).toString('latin1') ?? ''})`);
        }
        if (d.child.exitCode !== null) {
          failures.push(`daemon exited (${d.child.exitCode}) after ${req.method} http://${req.host}${req.path.slice(0, 200)}`);
          return;
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const logTail = failures.length ? `\ndaemon log (warnings and errors):\n${d.log.split('\n').filter((l) => /"level":(40|50|60)/.test(l)).slice(-8).join('\n')}` : '';
    expect(failures, `seed ${SEED}: replay with CTL_HOSTILE_SEED=${SEED}\n${failures.join('\n')}${logTail}`).toEqual([]);
    expect(d.child.exitCode, `seed ${SEED}`).toBeNull();
    expect((await d.request('core', 'GET', '/core/1.0/ready')).status).toBe(200);
    expect(rssMb(d.child.pid!), `seed ${SEED}: daemon RSS`).toBeLessThan(RSS_LIMIT_MB);
  }, 60_000);
});
