/**
 * The alert manager console with 10,000 alerts: the first render (navigation to the counted,
 * drawn groups) and filtering as you type stay fast, because the page draws only the first groups
 * and the first alerts of each, from a first, small answer (ctl_groups, ctl_alerts_per_group)
 * that does not wait for the whole 6 MB one.
 * Run inside `unshare -n bash -c 'ip link set lo up && npx vitest run test/console/alertmanager-10k.e2e.test.ts'`.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { HAVE_CHROMIUM, launchBrowser, openConsole } from './browser.js';

const N = 10_000;

describe.skipIf(!HAVE_CHROMIUM)('alert manager console with 10,000 alerts (chromium)', () => {
  let d: TestDaemon;
  let base: string;
  let browser: Browser;

  beforeAll(async () => {
    d = await startDaemon();
    base = await d.baseUrl('alertmanager');
    for (let b = 0; b < N / 1000; b++) {
      const batch = Array.from({ length: 1000 }, (_, i) => {
        const n = b * 1000 + i;
        return {
          labels: { alertname: `Alert${n % 100}`, instance: `host-${n}.example.org:9100`, job: `job${n % 7}`, severity: n % 10 === 0 ? 'page' : 'warning' },
          annotations: { summary: `Something is wrong on host-${n}`, description: 'A longer text that an alert usually carries along with it, for realism.' },
          generatorURL: `http://prometheus.example/graph?g0.expr=up%7Binstance%3D%22host-${n}%22%7D`,
        };
      });
      const r = await d.request('alertmanager', 'POST', '/api/v2/alerts', batch);
      expect(r.status, r.text).toBe(200);
    }
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await d?.cleanup();
  });

  it('first render under 1 s, filtering as you type', async () => {
    const c = await openConsole(browser, base);
    const { page } = c;
    // In the page: when the hash changed, and when the count and the 20th group were drawn.
    await page.addInitScript(() => {
      const w = window as unknown as { marks: Record<string, number> };
      w.marks = {};
      addEventListener('hashchange', () => (w.marks = { hash: performance.now() }));
      new MutationObserver(() => {
        if (!w.marks.drawn && document.querySelectorAll('[data-testid=alert-group]').length >= 20 && /\b10000 alerts in 100 groups/.test(document.querySelector('[data-testid=alert-count]')?.textContent ?? '')) w.marks.drawn = performance.now();
      }).observe(document, { subtree: true, childList: true, characterData: true });
    });
    // Warm: the browser's first start of a page (and the daemon's first answer) is not the page's cost.
    await page.goto(`${base}/#/status`);
    await page.getByTestId('config').waitFor();

    const started = Date.now();
    await page.goto(`${base}/#/alerts`);
    await page.getByText(`${N} alerts in 100 groups`).waitFor({ timeout: 20_000 });
    await page.getByTestId('alert-group').nth(19).waitFor();
    const firstRender = Date.now() - started;
    // The page drew the groups before the whole answer was read: from the first, small one.
    const t = await page.evaluate(() => {
      const w = window as unknown as { marks: Record<string, number> };
      const whole = performance
        .getEntriesByType('resource')
        .filter((e) => /\/api\/v2\/alerts\/groups$/.test(e.name))
        .map((e) => (e as PerformanceResourceTiming).responseEnd);
      return { drawn: w.marks.drawn! - w.marks.hash!, drawnAt: w.marks.drawn!, wholeEnd: whole[0] };
    });
    expect(c.requests.some((u) => u.includes('ctl_alerts_per_group=5'))).toBe(true);
    expect(t.drawnAt).toBeLessThan(t.wholeEnd ?? Infinity);
    // Measured before the first, small answer: 1068-1792 ms at load 15-22 on 2 cores (of which the
    // daemon's 6 MB groups answer ~550 ms), 839-947 ms at load 11. With it: 407-601 ms at load 6-11,
    // of which the page itself (hash change to 20 groups drawn) 207-411 ms, mostly the daemon's first
    // grouping after its start (48-123 ms warm); the rest is Playwright's round trips. The bound is 1 s (held
    // with CTL_STRICT_TIMING=1 on a quiet machine); loaded, 8 s still catches a page that draws every alert.
    console.log(`10,000 alerts: first render ${firstRender} ms (in the page: ${Math.round(t.drawn)} ms)`);
    expect(firstRender).toBeLessThan(process.env.CTL_STRICT_TIMING ? 1000 : 8000);
    expect(await page.getByTestId('alert').count()).toBe(20 * 5);

    // Type a filter key by key; each key filters all 10,000 alerts.
    const filter = page.getByRole('searchbox', { name: 'Filter (matchers)' });
    await filter.focus();
    const typed = Date.now();
    await page.keyboard.type('instance=~"host-12.*"');
    await page.getByText('111 alerts in 100 groups').waitFor();
    const perKey = (Date.now() - typed) / 'instance=~"host-12.*"'.length;
    // Measured 34-69 ms a key at load 15-22.
    console.log(`10,000 alerts: ${perKey.toFixed(1)} ms per key typed`);
    expect(perKey).toBeLessThan(process.env.CTL_STRICT_TIMING ? 100 : 1000);
    c.clean();
    await c.close();
  });
});
