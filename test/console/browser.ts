/**
 * Browser tests for the web consoles: Debian's chromium driven by playwright-core. `openConsole`
 * gives a page that records every console error and uncaught exception, and aborts (and records)
 * any request leaving the page's origin; `clean()` asserts neither happened.
 *
 * Run the tests inside `unshare -n` (loopback only), like every test that starts a daemon.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CTL_TEST_CHROMIUM ?? '/usr/bin/chromium';

/** False when no chromium is installed (the browser tests skip, saying why). */
export const HAVE_CHROMIUM = existsSync(CHROMIUM);

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // No first-run tasks, no component updates, no phoning home: the tests run without a network.
    args: ['--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-default-apps', '--disable-extensions'],
  });
}

export interface ConsolePage {
  page: Page;
  context: BrowserContext;
  /** Console errors and uncaught exceptions, in order. */
  errors: string[];
  /** Requests to another origin (aborted). */
  foreign: string[];
  /** Every request URL the page made. */
  requests: string[];
  /** Throws when the page logged an error or tried to leave its origin. */
  clean(): void;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** Basic-auth credentials (web-config-file listeners). */
  httpCredentials?: { username: string; password: string };
  /** Viewport; default 1280x800. */
  viewport?: { width: number; height: number };
  colorScheme?: 'light' | 'dark';
  /** Console messages to tolerate (e.g. the 401 a test provokes on purpose). */
  allowErrors?: RegExp[];
}

/** A fresh browser context on `origin` (e.g. `http://127.0.0.1:9093`); navigate with `page.goto`. */
export async function openConsole(browser: Browser, origin: string, opts: OpenOptions = {}): Promise<ConsolePage> {
  const context = await browser.newContext({
    httpCredentials: opts.httpCredentials,
    viewport: opts.viewport ?? { width: 1280, height: 800 },
    colorScheme: opts.colorScheme,
    serviceWorkers: 'block',
  });
  const page = await context.newPage();
  const errors: string[] = [];
  const foreign: string[] = [];
  const requests: string[] = [];
  const own = new URL(origin).origin;
  const allowed = (text: string) => (opts.allowErrors ?? []).some((r) => r.test(text));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !allowed(msg.text())) errors.push(`console: ${msg.text()}`);
  });
  page.on('pageerror', (err) => {
    if (!allowed(err.message)) errors.push(`exception: ${err.message}`);
  });
  await context.route('**/*', (route) => {
    const url = route.request().url();
    requests.push(url);
    let o: string;
    try {
      o = new URL(url).origin;
    } catch {
      o = '';
    }
    if (o !== own && !url.startsWith('data:')) {
      foreign.push(url);
      return route.abort('blockedbyclient');
    }
    return route.continue();
  });
  return {
    page,
    context,
    errors,
    foreign,
    requests,
    clean() {
      if (foreign.length > 0) throw new Error(`requests left the origin ${own}:\n${foreign.join('\n')}`);
      if (errors.length > 0) throw new Error(`the page logged errors:\n${errors.join('\n')}`);
    },
    close: () => context.close(),
  };
}
