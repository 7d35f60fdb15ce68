/**
 * The node monitor's console (/ of the nodes listener) in Debian's chromium against a running daemon
 * polling a fake NKN network: sign in with the account ID, the nodes' real state (a mining node, an
 * offline one), add a node through the form and watch its status arrive over the WebSocket session,
 * remove one; no request leaves the origin, no console error.
 * Run inside `unshare -n bash -c 'ip link set lo up && npx vitest run test/console/nodes.e2e.test.ts'`.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeNknNetwork } from '../fakes/nkn-node.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { HAVE_CHROMIUM, launchBrowser, openConsole } from './browser.js';

const IPS = ['203.0.113.60', '198.51.100.61', '203.0.113.62'];

describe.skipIf(!HAVE_CHROMIUM)('node monitor console (chromium)', { timeout: 90_000 }, () => {
  let d: TestDaemon;
  let fake: FakeNknNetwork;
  let base: string;
  let browser: Browser;
  let Hash: string;

  const api = async (body: unknown) => (await d.request('nodes', 'POST', '/api', body)).json;

  beforeAll(async () => {
    fake = await new FakeNknNetwork().start();
    fake.setMode('198.51.100.61', 'offline');
    d = await startDaemon({
      ctlYaml: {
        egress: { 'address-map': fake.addressMap(IPS) },
        nodes: { poll: { interval: 1, 'retry-delay': 0, retries: 0, 'dirty-retries': 0 } },
      },
    });
    base = await d.baseUrl('nodes');
    browser = await launchBrowser();
    Hash = (await api({ Method: 'genid' })).Value.Hash;
    expect((await api({ Method: 'addnodes', Value: { Hash, Multiple: true, Name: 'e2e', Ip: `${IPS[0]}\n${IPS[1]}` } })).Code).toBe(0);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await d?.cleanup();
    await fake?.stop();
  });

  it('signs in with the account ID and shows the nodes, adds one (live) and removes one', async () => {
    const c = await openConsole(browser, base);
    const page = c.page;
    page.on('dialog', (dlg) => void dlg.accept());
    await page.goto(`${base}/`);
    await page.getByLabel('Account ID').fill(Hash);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const table = page.getByRole('region', { name: 'Nodes' });
    await table.locator(`tr[data-node="${IPS[0]}"]`).getByText('PERSIST_FINISHED').waitFor();
    await table.locator(`tr[data-node="${IPS[1]}"]`).getByText('_OFFLINE_').waitFor();
    await page.getByText('live', { exact: true }).waitFor();

    // Added through the form; its state comes with the next poll cycle, pushed over the session.
    await page.getByLabel('Name (numbered when several)').fill('third');
    await page.getByLabel(/IPv4 addresses/).fill(IPS[2]!);
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await table.locator(`tr[data-node="${IPS[2]}"]`).getByText('PERSIST_FINISHED').waitFor();
    const listed = (await api({ Method: 'getmynodes', Value: { Hash } })).Value.List;
    expect(listed.map((n: any) => n.Ip).sort()).toEqual([...IPS].sort());

    await page.getByLabel('Select e2e2').check();
    await page.getByRole('button', { name: /Remove selected/ }).click();
    await table.locator(`tr[data-node="${IPS[1]}"]`).waitFor({ state: 'detached' });
    expect((await api({ Method: 'getmynodes', Value: { Hash } })).Value.List).toHaveLength(2);

    // Signed in across a reload (the ID stays in this browser), signed out on request.
    await page.reload();
    await table.locator(`tr[data-node="${IPS[0]}"]`).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Account ID').waitFor();
    c.clean();
    await c.close();
  });

  it('refuses an unknown ID and creates an account', async () => {
    const c = await openConsole(browser, base, { viewport: { width: 390, height: 844 } });
    const page = c.page;
    await page.goto(`${base}/`);
    await page.getByLabel('Account ID').fill('0'.repeat(64));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('No account has this ID.').waitFor();
    await page.getByRole('button', { name: 'Create an account' }).click();
    await page.getByText(/keep this ID/).waitFor();
    const id = await page.getByLabel('Account ID').inputValue();
    expect(id).toMatch(/^[0-9a-f]{64}$/);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('No nodes yet').waitFor();
    // The whole sentence is on the 390-px screen (not cut off inside the table's scroller).
    const box = await page.getByText('No nodes yet').evaluate((e) => {
      const r = document.createRange();
      r.selectNodeContents(e);
      const t = r.getBoundingClientRect();
      let clip = innerWidth;
      for (let p = e.parentElement; p; p = p.parentElement) if (getComputedStyle(p).overflowX !== 'visible') clip = Math.min(clip, p.getBoundingClientRect().right);
      return { right: t.right, clip };
    });
    expect(box.right).toBeLessThanOrEqual(box.clip);
    c.clean();
    await c.close();
  });

  it('says so when the API does not answer (a 503 from a proxy), without an uncaught error', async () => {
    const c = await openConsole(browser, base, { allowErrors: [/status of 503/] });
    await c.context.route('**/api', (r) => r.fulfill({ status: 503, contentType: 'text/plain', body: 'Service Unavailable' }));
    await c.page.goto(`${base}/`);
    await c.page.getByLabel('Account ID').fill(Hash);
    await c.page.getByRole('button', { name: 'Sign in' }).click();
    await c.page.getByText('The server answered 503: Service Unavailable').waitFor();
    c.clean();
    await c.close();
  });
});
