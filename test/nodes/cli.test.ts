import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeNknNetwork } from '../fakes/nkn-node.js';
import { runCtl, startDaemon, type TestDaemon } from '../helpers/daemon.js';

let d: TestDaemon;
let fake: FakeNknNetwork;
let hash: string;
const IPS = ['203.0.113.60', '203.0.113.61', '203.0.113.62'];

beforeAll(async () => {
  fake = await new FakeNknNetwork().start();
  fake.setNode('203.0.113.60', { neighbors: ['192.0.2.1', '192.0.2.2'] });
  d = await startDaemon({
    ctlYaml: {
      egress: { 'address-map': fake.addressMap(IPS) },
      nodes: { poll: { interval: 1, 'retry-delay': 0, retries: 0 } },
    },
  });
}, 60_000);

afterAll(async () => {
  await d?.cleanup();
  await fake?.stop();
});

const ctl = (args: string[], env: Record<string, string> = {}, input?: string) => d.cli(args, { CTL_NODE_HASH: hash, ...env }, input);

async function until(fn: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await fn()) && Date.now() < end) await new Promise((r) => setTimeout(r, 150));
}

describe('ctl node', () => {
  it('genid prints a new ID', async () => {
    const r = await d.cli(['node', 'genid']);
    expect(r.code).toBe(0);
    hash = r.stdout.trim();
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('add, list and details', async () => {
    let r = await ctl(['node', 'add', '--name', 'first', IPS[0]!]);
    expect(r).toMatchObject({ code: 0, stdout: 'Your node added\n' });
    r = await ctl(['node', 'add', '--name', 'bulk', IPS[1]!, IPS[2]!]);
    expect(r).toMatchObject({ code: 0, stdout: 'Nodes added\n' });
    r = await ctl(['node', 'add', '--file', '-'], {}, `${IPS[0]}\n${IPS[1]}\n`);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/already been created|weren't added.*code 14/);
    await until(async () => !(await ctl(['node', 'list'])).stdout.includes('waiting'));
    r = await ctl(['node', 'list']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+NAME\s+IP\s+STATE/);
    expect(lines).toHaveLength(4);
    expect(r.stdout).toMatch(/first\s+203\.0\.113\.60\s+PERSIST_FINISHED/);
    expect(r.stdout).toMatch(/bulk2\s+203\.0\.113\.61/); // numbered after the account's nodes
    const json = JSON.parse((await ctl(['node', 'list', '-o', 'json'])).stdout);
    // The data, not the envelope it travelled in.
    expect(json.Method).toBeUndefined();
    expect(json.Code).toBeUndefined();
    const id = json.List[0].NodeId;
    r = await ctl(['node', 'details', String(id)]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/state:\s+PERSIST_FINISHED/);
    expect(r.stdout).toMatch(/neighbours:\s+2 \(2 PERSIST_FINISHED\)/);
  });

  it('netstatus, wallets set/list', async () => {
    await until(async () => (await ctl(['node', 'netstatus'])).stdout.includes('nodes:'));
    let r = await ctl(['node', 'netstatus']);
    expect(r.stdout).toMatch(/nodes:\s+3/);
    r = await ctl(['node', 'wallets', 'list']);
    expect(r).toMatchObject({ code: 0, stdout: 'no wallets\n' });
    r = await ctl(['node', 'wallets', 'set', 'NKNZKKF9u1MUQWnK272YoFiMTn5tjZh7uRQE']);
    expect(r).toMatchObject({ code: 0, stdout: 'All settings saved\n' });
    r = await ctl(['node', 'wallets', 'list']);
    expect(r.stdout).toMatch(/NKNZKKF9u1MUQWnK272YoFiMTn5tjZh7uRQE\s+waiting for update/);
    r = await ctl(['node', 'wallets', 'set', 'NKNbad']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/code 17/);
    expect((await ctl(['node', 'wallets', 'set'])).code).toBe(2);
    expect((await ctl(['node', 'wallets', 'set', '--clear'])).code).toBe(0);
  });

  it('watch renders the live table and stops after --count refreshes', async () => {
    const r = await ctl(['node', 'watch', '--count', '1', '--interval', '0.2']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/nodes 3\s+mining 3/);
    expect(r.stdout).toMatch(/203\.0\.113\.62/);
  });

  it('rm by address and by id; usage and API errors have their exit codes', async () => {
    let r = await ctl(['node', 'rm', IPS[2]!]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^removed 1 node\(s\): \d+\n$/);
    const id = JSON.parse((await ctl(['node', 'list', '-o', 'json'])).stdout).List[0].NodeId;
    r = await ctl(['node', 'rm', String(id), '999999']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/code 18/);
    expect((await ctl(['node', 'rm', String(id)])).code).toBe(0);
    expect((await ctl(['node', 'rm', '1', '203.0.113.1'])).code).toBe(2);
    expect((await ctl(['node', 'add', '10.0.0.1'])).stderr).toMatch(/not in public network \(code 11\)/);
    expect((await d.cli(['node', 'list'], { CTL_NODE_HASH: '' })).code).toBe(2);
    expect((await ctl(['node', 'list', '--hash', 'abc'])).stderr).toMatch(/Incorrect ID length \(code 254\)/);
    r = await ctl(['node', 'add', '198.51.100.63,solo']);
    expect(r).toMatchObject({ code: 0, stdout: 'Your node added\n' });
    expect(JSON.parse((await ctl(['node', 'list', '-o', 'json'])).stdout).List.map((n: any) => n.Name)).toContain('solo');
    const gone = await runCtl(['--socket', '/nonexistent/control.socket', 'node', 'genid']);
    expect(gone.code).toBe(3);
  });
});
