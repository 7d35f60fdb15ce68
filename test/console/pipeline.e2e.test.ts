/**
 * The content pipeline's console (/ of the pipeline listener) in Debian's chromium against a running
 * daemon whose drafts come from the mock LLM through the gateway and whose source is the feed fake:
 * sign in with the owner password, run the pipeline from the page, review the drafted posts (approve
 * with a schedule, edit, reject), add a source; no request leaves the origin, no console error.
 * Run inside `unshare -n bash -c 'ip link set lo up && npx vitest run test/console/pipeline.e2e.test.ts'`.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { type FakeFeeds, startFakeFeeds } from '../fakes/rss.js';
import { HAVE_CHROMIUM, launchBrowser, openConsole } from './browser.js';

const PASSWORD = 'console-owner-password';
const drafts = (n: number) => JSON.stringify({ posts: Array.from({ length: n }, (_, i) => ({ item: i + 1, content: `Console draft ${i + 1}`, thread: [] })) });

describe.skipIf(!HAVE_CHROMIUM)('pipeline console (chromium)', { timeout: 90_000 }, () => {
  let d: TestDaemon;
  let llm: MockUpstream;
  let feeds: FakeFeeds;
  let base: string;
  let browser: Browser;

  beforeAll(async () => {
    [llm, feeds] = await Promise.all([startLlmUpstream(), startFakeFeeds()]);
    llm.defaults = { text: drafts(3) };
    d = await startDaemon({
      files: { 'gateway.yaml': `providers:\n  - {id: local, kind: openai, base_url: "${llm.baseUrl('openai')}", api_key: "sk-x-0123456789", models: [m1]}\n` },
      ctlYaml: { egress: { allow: ['127.0.0.1'] }, pipeline: { 'owner-password': PASSWORD, 'fetch-timeout': '3s', 'batch-size': 3 } },
      env: { PIPELINE_MODEL: 'local/m1' },
    });
    base = await d.baseUrl('pipeline');
    browser = await launchBrowser();
    const src = await d.request('pipeline', 'POST', '/api/sources', { name: 'Blog', url: feeds.url('/rss.xml'), source_type: 'rss', category: 'tech' });
    expect(src.status).toBe(201);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await d?.cleanup();
    await Promise.all([llm?.close(), feeds?.close()]);
  });

  it('signs in, runs the pipeline, and reviews the drafts', async () => {
    const c = await openConsole(browser, base);
    const page = c.page;
    await page.goto(`${base}/#/runs`);
    await page.getByLabel('Owner password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Runs and schedules', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Run now' }).click();
    await page.getByRole('region', { name: 'Runs' }).getByText('completed').waitFor({ timeout: 30_000 });

    await page.getByRole('link', { name: 'Review' }).click();
    await page.getByText('Console draft 1').waitFor();
    const posts = (await d.request('pipeline', 'GET', '/api/posts?status=pending')).json.items as { id: number; content: string }[];
    expect(posts).toHaveLength(3);
    const byText = (t: string) => posts.find((p) => p.content === t)!.id;

    // Approve one at a time of day, edit and approve another, reject the third with feedback.
    const first = page.locator(`article[data-post="${byText('Console draft 1')}"]`);
    await first.getByLabel(/Publish at/).fill('2030-01-02T09:30');
    await first.getByRole('button', { name: 'Approve' }).click();
    await first.waitFor({ state: 'detached' });
    const second = page.locator(`article[data-post="${byText('Console draft 2')}"]`);
    await second.getByRole('button', { name: 'Edit' }).click();
    await second.getByLabel('Text').fill('Edited in the console');
    await second.getByRole('button', { name: 'Approve' }).click();
    await second.waitFor({ state: 'detached' });
    const third = page.locator(`article[data-post="${byText('Console draft 3')}"]`);
    await third.getByLabel('Feedback').fill('too generic');
    await third.getByRole('button', { name: 'Reject' }).click();
    await page.getByText('Nothing to review').waitFor();

    const get = async (id: number) => (await d.request('pipeline', 'GET', `/api/posts/${id}`)).json;
    const p1 = await get(byText('Console draft 1'));
    expect(p1.status).toBe('approved');
    expect(p1.scheduled_for).toMatch(/^2030-01-0[12]T/);
    const p2 = await get(byText('Console draft 2'));
    expect(p2).toMatchObject({ status: 'approved', content: 'Edited in the console', original_content: 'Console draft 2' });
    expect(await get(byText('Console draft 3'))).toMatchObject({ status: 'rejected', feedback: 'too generic' });

    await page.getByRole('link', { name: 'Posts' }).click();
    await page.getByRole('region', { name: 'Posts' }).getByText('Edited in the console').waitFor();
    c.clean();
    await c.close();
  });

  it('lists and adds sources', async () => {
    const c = await openConsole(browser, base, { colorScheme: 'dark' });
    const page = c.page;
    await page.goto(`${base}/#/sources`);
    await page.getByLabel('Owner password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const table = page.getByRole('region', { name: 'Sources' });
    await table.getByText('Blog').waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Atom feed');
    await page.getByLabel('URL').fill(feeds.url('/atom.xml'));
    await page.getByLabel('Category').fill('go');
    await page.getByRole('button', { name: 'Add source' }).click();
    await table.getByText('Atom feed').waitFor();
    const list = (await d.request('pipeline', 'GET', '/api/sources')).json as { name: string }[];
    expect(list.map((s) => s.name).sort()).toEqual(['Atom feed', 'Blog']);
    c.clean();
    await c.close();
  });
});
