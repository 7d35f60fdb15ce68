/**
 * The alert manager's web console in Debian's chromium against a running daemon: every page
 * renders the daemon's real state, the silence form creates a silence the API then lists, the
 * alert list follows new alerts live, no request leaves the origin, and no page logs an error.
 * Run inside `unshare -n bash -c 'ip link set lo up && npx vitest run test/console/alertmanager.e2e.test.ts'`.
 */
import bcrypt from 'bcryptjs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { HAVE_CHROMIUM, launchBrowser, openConsole, type ConsolePage } from './browser.js';

const AM_YML = `
route:
  receiver: default
  group_by: ['alertname']
  routes:
    - receiver: pager
      matchers: ['severity="page"']
      group_by: ['alertname', 'instance']
receivers:
  - name: default
  - name: pager
inhibit_rules:
  - source_matchers: ['alertname="DatacenterDown"']
    target_matchers: ['alertname="InstanceDown"']
`;

const USER = { username: 'admin', password: 's3cret' };
const WEB_YML = `basic_auth_users:\n  admin: ${bcrypt.hashSync(USER.password, 4)}\n`;

/** The page answers within this on a loaded machine (the first fetch and render took ~100 ms quiet). */
const eventually = <T,>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 10_000, interval: 50 });

function alert(labels: Record<string, string>, annotations: Record<string, string> = {}) {
  return { labels, annotations, generatorURL: 'http://prometheus.example/graph?g0.expr=up' };
}

describe.skipIf(!HAVE_CHROMIUM)('alert manager console (chromium)', () => {
  let d: TestDaemon;
  let base: string;
  let browser: Browser;
  const pages: ConsolePage[] = [];
  const auth = () => ({ Authorization: `Basic ${Buffer.from(`${USER.username}:${USER.password}`).toString('base64')}` });
  const open = async (path: string, opts: Parameters<typeof openConsole>[2] = {}) => {
    const c = await openConsole(browser, base, { httpCredentials: USER, ...opts });
    pages.push(c);
    await c.page.goto(`${base}${path}`);
    return c;
  };
  const post = async (alerts: unknown[]) => {
    const r = await d.request('alertmanager', 'POST', '/api/v2/alerts', alerts);
    expect(r.status, r.text).toBe(200);
  };

  beforeAll(async () => {
    d = await startDaemon({
      files: { 'alertmanager.yml': AM_YML, 'web.yml': WEB_YML },
      ctlYaml: { servers: { alertmanager: { 'web-config-file': 'web.yml' } } },
    });
    base = await d.baseUrl('alertmanager');
    await post([
      alert({ alertname: 'DiskFull', instance: 'db1', severity: 'warning' }, { summary: 'Disk 97% full on db1' }),
      alert({ alertname: 'DiskFull', instance: 'db2', severity: 'warning' }),
      alert({ alertname: 'HighLatency', instance: 'web1', severity: 'page' }),
      alert({ alertname: 'HighLatency', instance: 'web2', severity: 'page' }),
      alert({ alertname: 'DatacenterDown', dc: 'eu' }),
      alert({ alertname: 'InstanceDown', instance: 'app1' }),
    ]);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    for (const p of pages) await p.close().catch(() => undefined);
    await browser?.close();
    await d?.cleanup();
  });

  it('serves the page with the listener\'s basic auth and a strict CSP', async () => {
    const anon = await fetch(`${base}/`);
    expect(anon.status).toBe(401);
    const r = await fetch(`${base}/`, { headers: auth() });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-security-policy')).toMatch(/^default-src 'self'; script-src 'self'; style-src 'self';/);
    expect(await r.text()).toMatch(/<script type="module" src="assets\/alertmanager-[0-9a-f]+\.js">/);
  });

  it('#/alerts: groups by route, hides inhibited alerts, filters as you type, a label click filters', async () => {
    const c = await open('/#/alerts');
    const { page } = c;
    const count = page.getByTestId('alert-count');
    // 6 alerts, InstanceDown inhibited by DatacenterDown: 5 shown, in DiskFull, HighLatency x2 (pager: by instance), DatacenterDown.
    await eventually(() => count.textContent()).toBe('5 alerts in 4 groups');
    expect(await page.getByTestId('alert-group').filter({ hasText: 'receiver: pager' }).count()).toBe(2);
    await page.getByLabel('Inhibited').check();
    await eventually(() => count.textContent()).toBe('6 alerts in 5 groups');
    await page.getByLabel('Inhibited').uncheck();

    const filter = page.getByRole('searchbox', { name: 'Filter (matchers)' });
    await filter.fill('severity="page"');
    await eventually(() => count.textContent()).toBe('2 alerts in 2 groups');
    await filter.fill('alertname=~"Disk.*"');
    await eventually(() => count.textContent()).toBe('2 alerts in 1 group');
    // A half-typed filter keeps the last one that parsed and says what is wrong.
    await filter.fill('alertname=~"Disk.*", instance="');
    await eventually(() => page.locator('#filter-error').textContent()).toMatch(/unescaped double quote/);
    await eventually(() => count.textContent()).toBe('2 alerts in 1 group');
    await filter.fill('');
    await eventually(() => count.textContent()).toBe('5 alerts in 4 groups');
    // A label chip of an alert adds it to the filter; the address keeps Alertmanager's query form.
    await page.getByRole('button', { name: 'instance="db2"' }).click();
    await eventually(() => count.textContent()).toBe('1 alert in 1 group');
    // (The address follows after the paint.)
    await eventually(() => decodeURIComponent(new URL(page.url()).hash)).toContain('filter={instance="db2"}');
    // Annotations on demand.
    await filter.fill('instance="db1"');
    await page.getByRole('button', { name: 'Info' }).click();
    await page.getByText('Disk 97% full on db1').waitFor();
    c.clean();
  });

  it('a notification link (#/alerts?receiver=pager) opens the receiver\'s alerts', async () => {
    const c = await open('/#/alerts?receiver=pager');
    await eventually(() => c.page.getByTestId('alert-count').textContent()).toBe('2 alerts in 2 groups');
    c.clean();
  });

  it('the silence form previews what it mutes, creates the silence, and the API lists it', async () => {
    const c = await open(`/#/silences/new?filter=${encodeURIComponent('{alertname="HighLatency"}')}`);
    const { page } = c;
    await eventually(() => page.getByTestId('preview-count').textContent()).toBe('2');
    await page.getByLabel('Matcher 1 value').fill('HighLat.*');
    await eventually(() => page.getByTestId('preview-count').textContent()).toBe('0');
    await page.getByLabel('Regex').first().check();
    await eventually(() => page.getByTestId('preview-count').textContent()).toBe('2');
    await page.getByRole('button', { name: 'Add matcher' }).click();
    await page.getByLabel('Matcher 2 label name').fill('instance');
    await page.getByLabel('Matcher 2 value').fill('web1');
    await eventually(() => page.getByTestId('preview-count').textContent()).toBe('1');
    // Creator and comment are required: the form says so and sends nothing.
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByText('Say why (the comment is required).').waitFor();
    await page.getByLabel('Creator').fill('alice');
    await page.getByLabel('Comment').fill('deploying web1');
    await page.getByLabel('Duration').fill('3h');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.waitForURL(/#\/silences\/[0-9a-f-]{36}$/);
    const id = /#\/silences\/([0-9a-f-]{36})$/.exec(page.url())![1]!;
    const listed = (await d.request('alertmanager', 'GET', '/api/v2/silences')).json as Array<{ id: string; matchers: unknown[]; createdBy: string; comment: string; startsAt: string; endsAt: string; status: { state: string } }>;
    const s = listed.find((x) => x.id === id)!;
    expect(s).toBeDefined();
    expect(s.status.state).toBe('active');
    expect(s.createdBy).toBe('alice');
    expect(s.comment).toBe('deploying web1');
    expect(s.matchers).toEqual([
      { name: 'alertname', value: 'HighLat.*', isRegex: true, isEqual: true },
      { name: 'instance', value: 'web1', isRegex: false, isEqual: true },
    ]);
    const hours = (Date.parse(s.endsAt) - Date.parse(s.startsAt)) / 3600_000;
    expect(hours).toBeGreaterThan(2.9);
    expect(hours).toBeLessThan(3.1);
    // The silence's page shows it and the alert it mutes.
    await page.getByRole('heading', { name: /Affected alerts/ }).waitFor();
    await eventually(() => page.getByTestId('preview-alert').count()).toBe(1);
    c.clean();
  });

  it('Edit changes a silence: the API answers the new comment and end', async () => {
    const created = await d.request('alertmanager', 'POST', '/api/v2/silences', {
      matchers: [{ name: 'instance', value: 'db2', isRegex: false, isEqual: true }],
      startsAt: new Date().toISOString(),
      endsAt: new Date(Date.now() + 3600_000).toISOString(),
      createdBy: 'carol',
      comment: 'first words',
    });
    const id = created.json.silenceID as string;
    const c = await open(`/#/silences/${id}/edit`);
    const { page } = c;
    const comment = page.getByLabel('Comment');
    await eventually(() => comment.inputValue()).toBe('first words');
    await eventually(() => page.getByTestId('preview-count').textContent()).toBe('1');
    await comment.fill('second words');
    await page.getByLabel('Duration').fill('5h');
    await page.getByRole('button', { name: 'Update' }).click();
    await page.waitForURL(/#\/silences\/[0-9a-f-]{36}$/);
    const now = /#\/silences\/([0-9a-f-]{36})$/.exec(page.url())![1]!;
    const s = (await d.request('alertmanager', 'GET', `/api/v2/silence/${now}`)).json;
    expect(s.comment).toBe('second words');
    expect(s.status.state).toBe('active');
    const hours = (Date.parse(s.endsAt) - Date.parse(s.startsAt)) / 3600_000;
    expect(hours).toBeGreaterThan(4.9);
    expect(hours).toBeLessThan(5.1);
    await d.request('alertmanager', 'DELETE', `/api/v2/silence/${now}`);
    c.clean();
  });

  it('shows no link for a generator URL that is not http(s), and escapes what alerts carry', async () => {
    await post([{ labels: { alertname: 'Hostile', instance: '<img src=x onerror=alert(1)>' }, annotations: { summary: '<script>alert(2)</script>' }, generatorURL: 'javascript:alert(3)' }]);
    const c = await open('/#/alerts?filter=' + encodeURIComponent('{alertname="Hostile"}'));
    const { page } = c;
    await eventually(() => page.getByTestId('alert-count').textContent()).toBe('1 alert in 1 group');
    expect(await page.getByRole('link', { name: 'Source' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Info' }).click();
    await page.getByText('<script>alert(2)</script>').waitFor();
    await page.getByText('instance="<img src=x onerror=alert(1)>"').waitFor();
    expect(await page.locator('img').count()).toBe(0);
    c.clean();
  });

  it('#/silences lists the silence under Active, and Expire expires it', async () => {
    const created = await d.request('alertmanager', 'POST', '/api/v2/silences', {
      matchers: [{ name: 'alertname', value: 'DiskFull', isRegex: false, isEqual: true }],
      startsAt: new Date().toISOString(),
      endsAt: new Date(Date.now() + 3600_000).toISOString(),
      createdBy: 'bob',
      comment: 'disk cleanup',
    });
    const id = created.json.silenceID as string;
    const c = await open('/#/silences');
    const { page } = c;
    const item = page.locator(`[data-testid="silence"][data-id="${id}"]`);
    await item.waitFor();
    expect(await item.textContent()).toContain('disk cleanup');
    await item.getByRole('button', { name: 'Expire' }).click();
    await item.getByRole('button', { name: 'Confirm expire' }).click();
    await eventually(async () => (await d.request('alertmanager', 'GET', `/api/v2/silence/${id}`)).json.status.state).toBe('expired');
    await page.getByRole('tab', { name: /Expired/ }).click();
    await page.locator(`[data-testid="silence"][data-id="${id}"]`).waitFor();
    c.clean();
  });

  it('#/status shows uptime, cluster status and the running configuration', async () => {
    const c = await open('/#/status');
    const { page } = c;
    await eventually(() => page.getByTestId('config').textContent()).toContain('receiver: pager');
    expect(await page.getByTestId('cluster-status').textContent()).toBe('disabled');
    expect(await page.getByTestId('uptime').textContent()).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d/);
    c.clean();
  });

  it('follows new alerts live (GET /ctl/events), without a reload', async () => {
    const c = await open('/#/alerts?filter=' + encodeURIComponent('{alertname="LiveOne"}'));
    const { page } = c;
    const count = page.getByTestId('alert-count');
    await eventually(() => count.textContent()).toBe('0 alerts in 0 groups');
    await page.locator('[data-live="live"]').waitFor();
    const navigations: string[] = [];
    page.on('framenavigated', (f) => navigations.push(f.url()));
    await post([alert({ alertname: 'LiveOne', instance: 'x' })]);
    // The stream sends at most one event per 2 s; a loaded machine is given 15 s.
    await expect.poll(() => count.textContent(), { timeout: 15_000, interval: 100 }).toBe('1 alert in 1 group');
    expect(navigations).toEqual([]);
    c.clean();
  });

  it('is readable on a phone in the dark: no sideways scrolling, dark colours', async () => {
    const c = await open('/#/alerts', { viewport: { width: 375, height: 740 }, colorScheme: 'dark' });
    const { page } = c;
    await page.getByTestId('alert-group').first().waitFor();
    const { scroll, width, bg } = await page.evaluate(() => ({
      scroll: document.documentElement.scrollWidth,
      width: window.innerWidth,
      bg: getComputedStyle(document.body).backgroundColor,
    }));
    expect(scroll).toBeLessThanOrEqual(width);
    expect(bg).toBe('rgb(22, 24, 29)');
    c.clean();
  });

  it('keyboard: / focuses the filter', async () => {
    const c = await open('/#/alerts');
    const { page } = c;
    await page.getByTestId('alert-group').first().waitFor();
    await page.keyboard.press('/');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('filter');
    await page.keyboard.type('alertname="DiskFull"');
    await eventually(() => page.getByTestId('alert-count').textContent()).toBe('2 alerts in 1 group');
    c.clean();
  });

  it('an API that fails (503, 401) shows why, not "Loading…" forever nor "No active silences"', async () => {
    for (const status of [503, 401]) {
      // Chromium logs every failed request as an error: these are the ones provoked here.
      const c = await open('/#/alerts', { allowErrors: [new RegExp(`status of ${status}`)] });
      const { page } = c;
      await c.context.route('**/api/v2/**', (r) => r.fulfill({ status, contentType: 'text/plain', body: status === 503 ? 'not ready' : 'Unauthorized' }));
      await page.reload();
      await page.getByRole('alert').getByText(`The server answered ${status}`).waitFor();
      expect(await page.getByText('Loading…').count()).toBe(0);
      await page.goto(`${base}/#/silences`);
      await page.getByRole('alert').getByText(`The server answered ${status}`).waitFor();
      // Unknown is not zero: no counts, no "No active silences."
      expect(await page.getByText(/No active silences/).count()).toBe(0);
      expect((await page.getByRole('tab', { name: /Active/ }).textContent())?.trim()).toBe('Active');
      expect(await page.getByText('Loading…').count()).toBe(0);
      c.clean();
      await c.close();
    }
  });

  it('#/silences/{id} with an ID that is no silence\'s says so, without a failed request', async () => {
    const c = await open('/#/silences/not-a-silence');
    const { page } = c;
    await page.getByText('No silence with ID').waitFor();
    expect(c.requests.some((u) => u.includes('/api/v2/silence/'))).toBe(false);
    // A well-formed ID nobody has (the API's 404): the same sentence.
    const c2 = await open('/#/silences/00000000-0000-4000-8000-000000000000', { allowErrors: [/status of 404/] });
    await c2.page.getByText('No silence with ID').waitFor();
    // The edit form of one: the same.
    await c.page.goto(`${base}/#/silences/not-a-silence/edit`);
    await c.page.getByText('No silence with ID').waitFor();
    expect(c.requests.some((u) => u.includes('/api/v2/silence/'))).toBe(false);
    c.clean();
    c2.clean();
  });

  it('the silence form: a refused submit takes the keyboard to the field to fix; a link\'s unreadable filter is named', async () => {
    const c = await open('/#/silences/new');
    const { page } = c;
    const focused = () => page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.id);
    await page.getByRole('button', { name: 'Create' }).click();
    await eventually(focused).toBe('Matcher 1 label name');
    await page.keyboard.type('alertname');
    await page.keyboard.press('Tab');
    await page.keyboard.type('DiskFull');
    await page.keyboard.press('Enter');
    await eventually(() => page.getByLabel('Creator').evaluate((el) => el === document.activeElement)).toBe(true);
    // A notification link with a filter that does not read: the form says which and why.
    await page.goto(`${base}/#/silences/new?filter=%7Balertname%3D~%22(%22%7D`);
    await page.getByRole('alert').getByText(/could not be read/).waitFor();
    c.clean();
  });

  it('a long label value wraps on a phone: no sideways scrolling on #/silences or a silence\'s page', async () => {
    const value = 'web-with-a-rather-long-instance-name-01.example.internal:9100';
    const now = Date.now();
    const r = await d.request('alertmanager', 'POST', '/api/v2/silences', {
      matchers: [{ name: 'instance', value, isRegex: false, isEqual: true }],
      startsAt: new Date(now).toISOString(),
      endsAt: new Date(now + 3600_000).toISOString(),
      createdBy: 'e2e',
      comment: 'long value',
    });
    expect(r.status, r.text).toBe(200);
    const id = r.json.silenceID as string;
    try {
      const c = await open('/#/silences', { viewport: { width: 390, height: 844 } });
      const { page } = c;
      const fits = () => page.evaluate(() => document.documentElement.scrollWidth <= innerWidth);
      await page.getByText(value, { exact: false }).first().waitFor();
      expect(await fits()).toBe(true);
      await page.goto(`${base}/#/silences/${id}`);
      await page.getByText('long value').waitFor();
      expect(await fits()).toBe(true);
      // Wrapped, not cut off: the whole value is on the screen.
      const chip = page.locator('.chip', { hasText: 'instance=' }).first();
      expect(await chip.evaluate((e) => e.scrollWidth <= e.clientWidth && e.getBoundingClientRect().right <= innerWidth)).toBe(true);
      c.clean();
    } finally {
      await d.request('alertmanager', 'DELETE', `/api/v2/silence/${id}`);
    }
  });

  it('an empty list says so, and how many alerts the Silenced and Inhibited toggles hide', async () => {
    const c = await open(`/#/alerts?filter=${encodeURIComponent('{alertname="InstanceDown"}')}`);
    const { page } = c;
    await eventually(() => page.getByTestId('no-alerts').textContent()).toBe(
      'No alerts match this filter. 1 silenced or inhibited alert is hidden: tick Silenced or Inhibited to show it.',
    );
    await page.getByLabel('Inhibited').check();
    await page.getByTestId('alert-group').first().waitFor();
    expect(await page.getByTestId('no-alerts').count()).toBe(0);
    await page.goto(`${base}/#/alerts?filter=${encodeURIComponent('{alertname="NoSuchAlert"}')}`);
    await eventually(() => page.getByTestId('no-alerts').textContent()).toBe('No alerts match this filter.');
    c.clean();
  });
});
