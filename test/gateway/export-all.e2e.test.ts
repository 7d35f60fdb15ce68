/**
 * GET /api/db-backups/exportAll through the real daemon: a .tar.gz with every component database
 * (consistent copies, locked ones included), the configuration files and a manifest; credentials
 * overwritten or left out unless secrets=1, which an API key needs the admin scope for; ctl backup export-all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { extract } from 'tar-stream';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

const UPSTREAM_KEY = 'sk-upstream-SECRET-1234567890';
const CLIENT_KEY = 'sk-client-SECRET-abcdefghijkl';
const MGMT_KEY = 'sk-mgmt-key-000000000000000';
const ADMIN_KEY = 'sk-admin-key-11111111111111';
let d: TestDaemon;
const out = mkdtempSync(join(tmpdir(), 'ctl-export-all-'));

beforeAll(async () => {
  d = await startDaemon({
    files: {
      'gateway.yaml': `# the team's gateway
providers:
  - {id: oa, kind: openai, base_url: "http://127.0.0.1:9/v1", api_key: "${UPSTREAM_KEY}", models: [m1]}
keys:
  - {name: client, key: "${CLIENT_KEY}", models: ["*"]}
  - {name: mgmt, key: "${MGMT_KEY}", models: ["*"], scopes: [management]}
  - {name: admin, key: "${ADMIN_KEY}", models: ["*"], scopes: [management, admin]}
settings:
  max_attempts: 3
`,
      // Any YAML at the top of the state dir goes in; a URL's password is redacted wherever it is.
      'notes.yaml': 'mirror: "https://user:hunter2@127.0.0.1:9/m"\n',
    },
  });
}, 60_000);
afterAll(async () => {
  await d?.cleanup();
  rmSync(out, { recursive: true, force: true });
});

async function untar(buf: Buffer): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  const x = extract();
  const done = new Promise<void>((resolve, reject) => {
    x.on('entry', (h, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        files.set(h.name, Buffer.concat(chunks));
        next();
      });
    });
    x.on('finish', resolve);
    x.on('error', reject);
  });
  x.end(gunzipSync(buf));
  await done;
  return files;
}

const tcpGet = async (path: string, key: string) => {
  const res = await fetch(`${await d.baseUrl('gateway')}${path}`, { headers: { Authorization: `Bearer ${key}` } });
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()), type: res.headers.get('content-type') };
};

describe('exportAll', () => {
  it('every component database and the configuration, credentials redacted; the copies open and hold the data', async () => {
    // Stored only, for its secret: no batch completes in this test, and under test the egress layer refuses any
    // destination outside loopback, so nothing is ever sent to this documentation address.
    const hook = await d.request('gateway', 'POST', '/api/webhooks', { url: 'https://203.0.113.5/hook', events: ['batch.completed'], secret: 'whsec_U0VDUkVUU0VDUkVUU0VDUkVUOTk=' });
    expect(hook.status, hook.text).toBe(201);
    expect((await d.request('gateway', 'POST', '/api/v1/management/proxies', { url: 'socks5://bob:pw-SECRET-proxy@127.0.0.1:1080' })).status).toBe(201);
    expect((await d.request('alertmanager', 'POST', '/api/v2/silences', { matchers: [{ name: 'a', value: 'b', isRegex: false }], startsAt: new Date().toISOString(), endsAt: new Date(Date.now() + 3_600_000).toISOString(), createdBy: 't', comment: 'c' })).status).toBe(200);

    const r = await tcpGet('/api/db-backups/exportAll', MGMT_KEY);
    expect(r.status, r.body.toString()).toBe(200);
    expect(r.type).toBe('application/gzip');
    const files = await untar(r.body);
    const manifest = JSON.parse(files.get('manifest.json')!.toString()) as { secrets: boolean; files: string[]; skipped: unknown[]; redactedColumns: string[] };
    expect(manifest.secrets).toBe(false);
    expect(manifest.skipped).toEqual([]);
    // Every database file the daemon has is in the archive.
    const dbs = readdirSync(join(d.dir, 'database')).filter((f) => f.endsWith('.db'));
    expect(dbs.length).toBeGreaterThanOrEqual(4);
    for (const f of dbs) expect(manifest.files).toContain(`database/${f}`);
    expect(manifest.files).toEqual(expect.arrayContaining(['gateway.yaml']));

    // No credential anywhere in the archive.
    for (const [name, body] of files) {
      const text = body.toString('latin1');
      for (const secret of [UPSTREAM_KEY, CLIENT_KEY, 'whsec_U0VDUkVUU0VDUkVUU0VDUkVUOTk=', 'pw-SECRET-proxy', 'hunter2']) expect(text, `${name} holds ${secret}`).not.toContain(secret);
    }
    expect(manifest.redactedColumns).toEqual(expect.arrayContaining(['database/gateway.db: webhooks.secret', 'database/gateway.db: proxies.password']));
    // The YAML keeps its comments and everything else.
    const yaml = files.get('gateway.yaml')!.toString();
    expect(yaml).toContain("# the team's gateway");
    expect(yaml).toMatch(/api_key: "?<redacted>"?/);
    expect(yaml).toMatch(/key: "?<redacted>"?, models/);
    expect(yaml).toContain('max_attempts: 3');
    expect(files.get('notes.yaml')!.toString()).toContain('https://user:<redacted>@127.0.0.1:9/m');

    // The copies are whole databases with the data.
    const am = join(out, 'am.db');
    writeFileSync(am, files.get('database/alertmanager.db')!);
    const db = new Database(am, { readonly: true });
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((t) => t.name);
    db.close();
    expect(tables.length).toBeGreaterThan(0);
    const gw = join(out, 'gw.db');
    writeFileSync(gw, files.get('database/gateway.db')!);
    const g = new Database(gw, { readonly: true });
    expect((g.prepare('SELECT count(*) AS n FROM webhooks').get() as { n: number }).n).toBe(1);
    g.close();
  });

  it('secrets=1 needs the admin scope on a key, and then keeps the credentials', async () => {
    const refused = await tcpGet('/api/db-backups/exportAll?secrets=1', MGMT_KEY);
    expect(refused.status).toBe(403);
    expect(refused.body.toString()).toMatch(/admin scope/);
    const r = await tcpGet('/api/db-backups/exportAll?secrets=1', ADMIN_KEY);
    expect(r.status).toBe(200);
    const files = await untar(r.body);
    expect(JSON.parse(files.get('manifest.json')!.toString()).secrets).toBe(true);
    expect(files.get('gateway.yaml')!.toString()).toContain(UPSTREAM_KEY);
    expect(files.get('database/gateway.db')!.toString('latin1')).toContain('whsec_U0VDUkVUU0VDUkVUU0VDUkVUOTk=');
  });

  it('ctl backup export-all writes the archive', async () => {
    const file = join(out, 'state.tar.gz');
    const r = await d.cli(['backup', 'export-all', '--out', file]);
    expect(r.code, r.stderr).toBe(0);
    const files = await untar(readFileSync(file));
    expect([...files.keys()]).toEqual(expect.arrayContaining(['manifest.json', 'database/gateway.db', 'gateway.yaml']));
  });
});
