/**
 * The gateway's dashboard (/dashboard) in Debian's chromium against a running daemon: the login sets
 * auth_token, each page renders the daemon's real state (a provider cooling down after a 429, the
 * request log growing live as requests finish, keys created and revoked through the form), no
 * request leaves the origin and the page logs no error.
 * Run inside `unshare -n bash -c 'ip link set lo up && npx vitest run test/console/gateway-dashboard.e2e.test.ts'`.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { HAVE_CHROMIUM, launchBrowser, openConsole, type ConsolePage } from './browser.js';

const PASSWORD = 'dashboard-e2e-pw';
const KEY = 'sk-gw-dash-e2e-0000000';

// Generous bounds: chromium and the daemon share two loaded cores with other test runs.
describe.skipIf(!HAVE_CHROMIUM)('gateway dashboard (chromium)', { timeout: 90_000 }, () => {
  let d: TestDaemon;
  let mock: MockUpstream;
  let base: string;
  let browser: Browser;

  const chat = (model: string, content = 'hello') =>
    fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` }, body: JSON.stringify({ model, messages: [{ role: 'user', content }] }) });

  /** A logged-in page (the login form, as a user would). */
  async function loggedIn(path = '/dashboard', opts: Parameters<typeof openConsole>[2] = {}): Promise<ConsolePage> {
    const c = await openConsole(browser, base, opts);
    await c.page.goto(`${base}${path}`);
    await c.page.getByLabel('Password').fill(PASSWORD);
    await c.page.getByRole('button', { name: 'Sign in' }).click();
    await c.page.getByRole('button', { name: 'Sign out' }).waitFor();
    return c;
  }

  beforeAll(async () => {
    mock = await startLlmUpstream({ apiKey: 'sk-up' });
    d = await startDaemon({
      files: {
        'gateway.yaml': `
providers:
  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: "sk-up", models: [m1, m2]}
  - {id: an, kind: anthropic, base_url: "${mock.baseUrl('anthropic')}", api_key: "sk-up", models: [claude-x]}
  - {id: ol, kind: ollama, base_url: "${mock.baseUrl('ollama')}", api_key: "sk-up", models: [llama-x]}
combos:
  - {name: chain, strategy: priority, targets: [oa/m1, an/claude-x]}
keys:
  - {name: e2e, key: "${KEY}", models: ["*"]}
pricing:
  an/claude-x: {input: 3, output: 15}
settings: {retry_wait_max_ms: 0}
`,
      },
      env: { REQUIRE_API_KEY: 'true', INITIAL_PASSWORD: PASSWORD },
    });
    base = await d.baseUrl('gateway');
    browser = await launchBrowser();
    // Real state to show: a request through the combo that falls back after a 429 from oa (which
    // puts oa's account into a cool-down), and a direct one.
    mock.enqueue({ status: 429, retryAfter: '600' }, 'openai');
    expect((await chat('chain')).status).toBe(200);
    expect((await chat('an/claude-x')).status).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await d?.cleanup();
    await mock?.close();
  });

  it('serves the dashboard from memory with a strict CSP and caching headers', async () => {
    const shell = await fetch(`${base}/dashboard/providers`);
    expect(shell.status).toBe(200);
    expect(shell.headers.get('content-security-policy')).toMatch(/script-src 'self'/);
    expect(shell.headers.get('cache-control')).toBe('no-cache');
    const html = await shell.text();
    const js = /src="(\/dashboard\/assets\/gateway-[0-9a-f]+\.js)"/.exec(html)![1]!;
    const asset = await fetch(`${base}${js}`, { headers: { 'accept-encoding': 'gzip' } });
    expect(asset.headers.get('cache-control')).toMatch(/immutable/);
    // The page needs no login to load; its data does.
    expect((await fetch(`${base}/api/providers`)).status).toBe(401);
  });

  it('logs in with the password, sets auth_token, and shows providers with their cool-down and breaker', async () => {
    const c = await loggedIn('/dashboard/providers');
    const cookies = await c.context.cookies(base);
    const token = cookies.find((k) => k.name === 'auth_token');
    expect(token?.httpOnly).toBe(true);
    expect(token?.value.length).toBeGreaterThan(20);
    await c.page.getByRole('heading', { name: 'Providers', level: 1 }).waitFor();
    const oa = c.page.locator('tr[data-provider="oa"]');
    await oa.getByText(/cool-down/).waitFor();
    // The breaker column comes from /api/health, a separate request that may answer after the
    // provider list: wait for it rather than counting at once.
    await oa.getByText('CLOSED').waitFor();
    await expect(oa.getByText('CLOSED').count()).resolves.toBe(1);
    const an = c.page.locator('tr[data-provider="an"]');
    await an.getByText('ready').waitFor();
    await an.getByText('1 models').waitFor();
    // The API the page read agrees.
    const r = await d.request('gateway', 'GET', '/api/providers/oa');
    expect(r.json.accounts[0].rateLimitedUntil).not.toBeNull();
    c.clean();
    await c.close();
  });

  it('shows the request log, and new requests appear live', async () => {
    const c = await loggedIn('/dashboard/logs');
    const table = c.page.getByRole('region', { name: 'Request log' });
    await table.getByText('an/claude-x').first().waitFor();
    await c.page.getByText('live', { exact: true }).waitFor();
    expect(await table.getByText('ol/llama-x').count()).toBe(0);
    expect((await chat('ol/llama-x', 'live one')).status).toBe(200);
    // Pushed over the SSE stream: no reload, no polling on this page.
    await table.locator('tr', { hasText: 'ol/llama-x' }).first().waitFor();
    // The combo request's fallback is in its details: oa answered 429, an served it.
    const combo = table.locator('tr', { hasText: 'after 1 fallback' }).first();
    await combo.getByRole('button', { name: 'Details' }).click();
    await table.getByText(/oa\/m1: error 429/).waitFor();
    c.clean();
    await c.close();
  });

  it('renders overview, models, combos, usage charts, cache and settings from the daemon', async () => {
    const c = await loggedIn('/dashboard');
    const page = c.page;
    await page.getByText('Requests (24 h)').waitFor();
    await page.getByRole('link', { name: 'Models' }).click();
    await page.getByText('an/claude-x').first().waitFor();
    await page.getByRole('link', { name: 'Combos' }).click();
    await page.getByText('chain').first().waitFor();
    await page.getByText('priority').first().waitFor();
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.locator('.uplot canvas').first().waitFor();
    await page.getByRole('region', { name: 'By provider' }).getByText('an').first().waitFor();
    await page.getByRole('link', { name: 'Cache' }).click();
    await page.getByText('Hit rate').waitFor();
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByText('Require a login').waitFor();
    expect(page.url()).toBe(`${base}/dashboard/settings`);
    // Back and forward stay in the app.
    await page.goBack();
    await page.getByText('Hit rate').waitFor();
    c.clean();
    await c.close();
  });

  it('creates a key with the form (shown once), sets a budget, and revokes it', async () => {
    const c = await loggedIn('/dashboard/keys');
    const page = c.page;
    page.on('dialog', (dlg) => void dlg.accept());
    await page.getByLabel('Name').fill('from-the-browser');
    await page.getByRole('button', { name: 'Create key' }).click();
    const raw = await page.getByLabel('The new key').inputValue();
    expect(raw).toMatch(/^sk-/);
    const listed = (await d.request('gateway', 'GET', '/api/keys')).json.keys.find((k: any) => k.name === 'from-the-browser');
    expect(listed.status).toBe('active');
    // The new key works.
    const ok = await fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${raw}` } });
    expect(ok.status).toBe(200);
    await page.getByRole('combobox', { name: 'Key' }).selectOption({ label: 'from-the-browser' });
    await page.getByLabel('Daily limit (USD)').fill('2.5');
    await page.getByRole('button', { name: 'Set budget' }).click();
    await page.getByRole('region', { name: 'Budgets' }).getByText('$2.50').waitFor();
    await page.locator(`tr[data-key="${listed.id}"]`).getByRole('button', { name: 'Revoke' }).click();
    await page.getByText('from-the-browser revoked.').waitFor();
    expect((await d.request('gateway', 'GET', `/api/keys/${listed.id}`)).json.status).toBe('revoked');
    c.clean();
    await c.close();
  });

  it('is usable on a phone in dark mode, with the keyboard', async () => {
    const c = await loggedIn('/dashboard', { viewport: { width: 390, height: 844 }, colorScheme: 'dark' });
    const page = c.page;
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(bg).toBe('rgb(13, 17, 23)');
    const menu = page.getByRole('button', { name: 'Menu' });
    await menu.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => menu.getAttribute('aria-expanded')).toBe('true');
    // Escape closes the menu and leaves the keyboard on its button.
    await page.keyboard.press('Escape');
    await expect.poll(() => menu.getAttribute('aria-expanded')).toBe('false');
    expect(await menu.evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.press('Enter');
    await page.getByRole('link', { name: 'Providers' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Providers', level: 1 }).waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    c.clean();
    await c.close();
  });

  it('opens without a login when require-login is off', async () => {
    await d.request('gateway', 'PUT', '/api/settings/require-login', { requireLogin: false });
    try {
      const c = await openConsole(browser, base);
      await c.page.goto(`${base}/dashboard/providers`);
      await c.page.locator('tr[data-provider="an"]').waitFor();
      expect((await c.context.cookies(base)).find((k) => k.name === 'auth_token')).toBeUndefined();
      c.clean();
      await c.close();
    } finally {
      await d.request('gateway', 'PUT', '/api/settings/require-login', { requireLogin: true });
    }
  });

  it('a session that ends (the cookie gone) brings the login back, saying why', async () => {
    // The one request that meets the ended session answers 401, which chromium logs.
    const c = await loggedIn('/dashboard', { allowErrors: [/status of 401/] });
    await c.context.clearCookies();
    // Go to another page as the nav link does (the overview's own polling may meet the 401 first and
    // take the link away: either way the login comes back).
    await c.page.evaluate(() => {
      history.pushState(null, '', '/dashboard/providers');
      dispatchEvent(new PopStateEvent('popstate'));
    });
    await c.page.getByText('Your session has ended: sign in again.').waitFor();
    await c.page.getByLabel('Password').fill(PASSWORD);
    await c.page.getByRole('button', { name: 'Sign in' }).click();
    await c.page.getByRole('heading', { name: 'Providers', level: 1 }).waitFor();
    expect(await c.page.getByText('Your session has ended').count()).toBe(0);
    c.clean();
    await c.close();
  });

  it('the overview says when the API fails, instead of "…" for ever', async () => {
    const c = await loggedIn('/dashboard/providers', { allowErrors: [/status of 503/] });
    await c.context.route(/\/api\/(monitoring|usage)\//, (r) => r.fulfill({ status: 503, contentType: 'application/json', body: '{"error":{"message":"gateway not ready"}}' }));
    await c.page.getByRole('link', { name: 'Overview' }).click();
    const gateway = c.page.locator('.stat', { has: c.page.locator('.stat-label', { hasText: /^Gateway$/ }) });
    await gateway.getByText('gateway not ready').waitFor();
    expect(await gateway.locator('.stat-value').textContent()).toBe('—');
    expect(await c.page.locator('.stat-value', { hasText: '…' }).count()).toBe(0);
    c.clean();
    await c.close();
  });

  it('/dashboard/providers/{id} (OmniRoute\'s page for one provider) opens the providers with that one marked', async () => {
    const c = await loggedIn('/dashboard/providers/an');
    await c.page.getByRole('heading', { name: 'Providers', level: 1 }).waitFor();
    await expect.poll(() => c.page.locator('tr[data-provider="an"]').getAttribute('aria-current')).toBe('true');
    expect(await c.page.locator('tr[data-provider="oa"]').getAttribute('aria-current')).toBeNull();
    expect(await c.page.getByRole('link', { name: 'Providers' }).getAttribute('aria-current')).toBe('page');
    await c.page.goto(`${base}/dashboard/providers/nosuch`);
    await c.page.getByText('No provider has the ID').waitFor();
    c.clean();
    await c.close();
  });
});
