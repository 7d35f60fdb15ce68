/**
 * The content pipeline CLI: `ctl pipeline …` (run, status, runs, stats, analytics, activity, model,
 * login, hash-password), `ctl post …`, `ctl source …`, `ctl category …`, `ctl style …`,
 * `ctl proposal …`. Over the control socket no token is needed (the socket is trusted); with --url
 * pass --token (or CTL_PIPELINE_TOKEN), e.g. from `ctl pipeline login`.
 */
import { randomBytes, scryptSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { Command } from 'commander';
import { ApiError, request, type RequestSpec } from './client.js';
import { outputFormat, printData, printObject, printRows, type Column } from './output.js';
import { action, intOption, UsageError } from './run.js';

const HOST = 'pipeline';
let token: string | undefined;

function authHeaders(): Record<string, string> {
  const t = token ?? process.env.CTL_PIPELINE_TOKEN;
  return t ? { Authorization: `Bearer ${t}` } : {};
}

function api<T = any>(method: string, path: string, body?: unknown, query?: RequestSpec['query']): Promise<T> {
  return request<T>({ host: HOST, method, path, body, query, headers: authHeaders() });
}

/** Read the token option of whichever group the command is in. */
function takeToken(cmd: Command): void {
  const o = cmd.optsWithGlobals<{ token?: string }>();
  if (o.token) token = o.token;
}

function withToken(cmd: Command): Command {
  cmd.option('--token <jwt>', 'bearer token for --url access (default: $CTL_PIPELINE_TOKEN; not needed on the socket)');
  cmd.hook('preAction', (_this, actionCmd) => takeToken(actionCmd));
  return cmd;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function idArg(value: string, what = 'id'): number {
  if (!/^\d+$/.test(value)) throw new UsageError(`${what} must be a positive integer, got ${JSON.stringify(value)}`);
  return Number(value);
}

function boolOption(name: string) {
  return (v: string): boolean => {
    if (/^(true|yes|on|1)$/i.test(v)) return true;
    if (/^(false|no|off|0)$/i.test(v)) return false;
    throw new UsageError(`${name} must be true or false, got ${JSON.stringify(v)}`);
  };
}

const short = (s: unknown, n = 60) => {
  const t = String(s ?? '').replace(/\s+/g, ' ');
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
};

// ----------------------------------------------------------------------------- pipeline

interface SourceReport {
  id: number;
  name: string;
  healthy: boolean;
  items: number;
  error: string | null;
}

interface RunProgress {
  stage: string;
  sources_total: number;
  sources_done: number;
  sources: SourceReport[];
  items_selected: number;
  model: string;
}

interface RunRecord {
  batch_id: string;
  status: string;
  stage: string;
  error: string | null;
  result: any;
  progress?: RunProgress;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Follow a run, printing each stage and each source's outcome to stderr once. */
async function followRun(batchId: string, quiet: boolean): Promise<RunRecord> {
  const say = (line: string) => {
    if (!quiet) process.stderr.write(`${line}\n`);
  };
  let stage = '';
  const seen = new Set<number>();
  for (;;) {
    const run = await api<RunRecord>('GET', `/api/pipeline/runs/${encodeURIComponent(batchId)}`);
    const p = run.progress;
    const sources = p?.sources ?? run.result?.sources ?? [];
    for (const s of sources as SourceReport[]) {
      if (seen.has(s.id)) continue;
      seen.add(s.id);
      say(`  source ${s.name}: ${s.healthy ? `ok, ${s.items} item${s.items === 1 ? '' : 's'}` : `FAILED: ${s.error}`}`);
    }
    const now = p?.stage ?? run.stage;
    if (now !== stage && run.status === 'running') {
      stage = now;
      if (stage === 'fetching') say(`fetching ${p?.sources_total ?? ''} source(s)…`);
      else if (stage === 'drafting') say(`drafting ${p?.items_selected ?? ''} post(s) with ${p?.model ?? 'the model'}…`);
      else if (stage !== 'starting') say(`${stage}…`);
    }
    if (run.status !== 'running') return run;
    await sleep(250);
  }
}

function printRunSummary(r: any): Promise<void> {
  return printObject(
    [
      ['batch', r.batch_id],
      ['posts', r.post_count],
      ['sources healthy', `${r.sources_healthy}/${r.sources_total}`],
      ['items', `${r.items_fetched} fetched, ${r.items_new} new, ${r.items_selected} selected`],
      ['rejected drafts', r.posts_rejected ? r.rejected.map((x: any) => `${x.item === null ? 'answer' : `item ${x.item + 1}`}: ${x.reason}`).join('; ') : 0],
      ['model', r.model],
      ['took', `${r.duration_ms} ms`],
    ],
    r,
  );
}

/** scrypt hash in the format the pipeline reads (`owner-password-hash`; see src/pipeline/auth/password.ts). */
export function hashOwnerPassword(password: string): string {
  const salt = randomBytes(16);
  const key = scryptSync(password.normalize('NFC'), salt, 32, { N: 16384, r: 8, p: 1 });
  return `scrypt$16384$8$1$${salt.toString('base64')}$${key.toString('base64')}`;
}

function registerPipeline(program: Command): void {
  const pipe = withToken(program.command('pipeline').description('the content pipeline: runs, model, dashboard, analytics'));

  pipe
    .command('run')
    .description('run the pipeline once (fetch sources, rank, draft a batch of pending posts), showing progress')
    .option('--no-wait', 'start the run and print its batch id without waiting')
    .option('-q, --quiet', 'no progress lines on stderr')
    .action(
      action(async (opts: { wait: boolean; quiet?: boolean }) => {
        const started = await api<{ batch_id: string }>('POST', '/api/pipeline/run', undefined, { wait: false });
        if (!opts.wait) {
          if (outputFormat() !== 'table') return printData(started);
          process.stdout.write(`${started.batch_id}\n`);
          return;
        }
        if (!opts.quiet) process.stderr.write(`run ${started.batch_id} started\n`);
        const run = await followRun(started.batch_id, opts.quiet ?? false);
        if (run.status !== 'completed') throw new ApiError(500, `run ${run.batch_id} ${run.status}: ${run.error}`, run);
        if (outputFormat() !== 'table') return printData(run.result);
        await printRunSummary(run.result);
      }),
    );

  pipe
    .command('status')
    .description('the run in progress, or the last run of the daemon, and the scheduled jobs')
    .action(
      action(async () => {
        const s = await api('GET', '/api/pipeline/status');
        const health = await api<{ schedules: any[] }>('GET', '/api/system/health');
        if (outputFormat() !== 'table') return printData({ ...s, schedules: health.schedules });
        if (!s.run) process.stdout.write('no run since the daemon started\n');
        else {
          const r = s.run;
          await printObject(
            [
              ['batch', r.batch_id],
              ['status', r.status],
              ['stage', r.stage],
              ['sources', `${r.sources_done}/${r.sources_total} done, ${r.sources_healthy} healthy`],
              ['items', `${r.items_fetched} fetched, ${r.items_new} new, ${r.items_selected} selected`],
              ['posts', r.post_count],
              ['error', r.error ?? ''],
            ],
            s,
          );
        }
        process.stdout.write('\n');
        if (health.schedules.length === 0) return void process.stdout.write('no scheduled jobs (pipeline.schedules in ctl.yaml)\n');
        await printRows(health.schedules, [
          { header: 'job', get: (j) => j.job },
          { header: 'schedule', get: (j) => j.schedule },
          { header: 'next run', get: (j) => j.next_run_at },
          { header: 'last run', get: (j) => j.last_run_at ?? '-' },
          { header: 'last status', get: (j) => (j.running ? 'running' : (j.last_status ?? '-')) },
          { header: 'error', get: (j) => short(j.last_error ?? '', 50) },
        ]);
      }),
    );

  pipe
    .command('runs')
    .description('recent runs, newest first')
    .option('--limit <n>', 'how many', intOption('--limit'), 20)
    .action(
      action(async (opts: { limit: number }) => {
        const runs = await api<any[]>('GET', '/api/pipeline/runs', undefined, { limit: opts.limit });
        await printRows(runs, [
          { header: 'batch', get: (r) => r.batch_id },
          { header: 'status', get: (r) => r.status },
          { header: 'posts', get: (r) => r.post_count },
          { header: 'model', get: (r) => r.model },
          { header: 'started', get: (r) => r.started_at },
          { header: 'error', get: (r) => short(r.error ?? '', 50) },
        ]);
      }),
    );

  pipe
    .command('stats')
    .description('dashboard counters')
    .action(
      action(async () => {
        const s = await api('GET', '/api/dashboard/stats');
        await printObject(Object.entries(s), s);
      }),
    );

  pipe
    .command('analytics')
    .description('engagement totals of published posts (rate = (likes + reposts + replies) / impressions × 100)')
    .option('--period <p>', '7d, 30d or all', '30d')
    .option('--by-category', 'one row per category')
    .action(
      action(async (opts: { period: string; byCategory?: boolean }) => {
        if (!['7d', '30d', 'all'].includes(opts.period)) throw new UsageError('--period must be 7d, 30d or all');
        if (opts.byCategory) {
          const rows = await api<any[]>('GET', '/api/analytics/categories', undefined, { period: opts.period });
          return printRows(rows, [
            { header: 'category', get: (r) => r.category || '(none)' },
            { header: 'posts', get: (r) => r.post_count },
            { header: 'impressions', get: (r) => r.total_impressions },
            { header: 'likes', get: (r) => r.total_likes },
            { header: 'reposts', get: (r) => r.total_reposts },
            { header: 'replies', get: (r) => r.total_replies },
            { header: 'engagement %', get: (r) => r.engagement_rate },
          ]);
        }
        const a = await api('GET', '/api/analytics', undefined, { period: opts.period });
        await printObject(Object.entries(a), a);
      }),
    );

  pipe
    .command('activity')
    .description('recent activity, newest first')
    .option('--limit <n>', 'how many (at most 100)', intOption('--limit'), 10)
    .action(
      action(async (opts: { limit: number }) => {
        const rows = await api<any[]>('GET', '/api/activity', undefined, { limit: opts.limit });
        await printRows(rows, [
          { header: 'time', get: (r) => r.created_at },
          { header: 'type', get: (r) => r.type },
          { header: 'message', get: (r) => r.message },
        ]);
      }),
    );

  const model = pipe.command('model').description('the drafting model (database value, else PIPELINE_MODEL)');
  model
    .command('get')
    .description('show the model and where it comes from')
    .action(
      action(async () => {
        const m = await api('GET', '/api/settings/model');
        if (outputFormat() !== 'table') return printData(m);
        process.stdout.write(`${m.model_id ?? '(none)'} (${m.source})\n`);
      }),
    );
  model
    .command('set')
    .description('set the model (any model id the gateway resolves)')
    .argument('<model-id>', 'e.g. openai/gpt-4o-mini, an alias or a combo')
    .action(
      action(async (modelId: string) => {
        const r = await api('PUT', '/api/settings/model', { model_id: modelId });
        if (outputFormat() !== 'table') return printData(r);
        process.stdout.write(`${r.message}\n`);
      }),
    );
  model
    .command('unset')
    .description('forget the database value (PIPELINE_MODEL applies again)')
    .action(
      action(async () => {
        const m = await api('DELETE', '/api/settings/model');
        if (outputFormat() !== 'table') return printData(m);
        process.stdout.write(`${m.model_id ?? '(none)'} (${m.source})\n`);
      }),
    );

  pipe
    .command('login')
    .description('log in with the owner password and print a bearer token (for --url access)')
    .option('--password-stdin', 'read the password from standard input')
    .action(
      action(async (opts: { passwordStdin?: boolean }) => {
        const password = opts.passwordStdin ? (await readStdin()).replace(/\r?\n$/, '') : process.env.PIPELINE_OWNER_PASSWORD;
        if (!password) throw new UsageError('give the password with --password-stdin (or PIPELINE_OWNER_PASSWORD)');
        const r = await request<any>({ host: HOST, method: 'POST', path: '/api/auth/login', body: { password } });
        if (outputFormat() !== 'table') return printData(r);
        process.stdout.write(`${r.access_token}\n`);
      }),
    );

  pipe
    .command('hash-password')
    .description('print a hash of the owner password for pipeline.owner-password-hash in ctl.yaml (no daemon needed)')
    .option('--password-stdin', 'read the password from standard input')
    .action(
      action(async (opts: { passwordStdin?: boolean }) => {
        if (!opts.passwordStdin) throw new UsageError('pass the password on standard input with --password-stdin');
        const password = (await readStdin()).replace(/\r?\n$/, '');
        if (!password) throw new UsageError('the password is empty');
        process.stdout.write(`${hashOwnerPassword(password)}\n`);
      }),
    );
}

// ----------------------------------------------------------------------------- posts

const POST_COLUMNS: Column<any>[] = [
  { header: 'id', get: (p) => p.id },
  { header: 'status', get: (p) => p.status },
  { header: 'category', get: (p) => p.category },
  { header: 'scheduled', get: (p) => p.scheduled_for ?? '' },
  { header: 'batch', get: (p) => p.batch_id },
  { header: 'content', get: (p) => short(p.content, 70) + (p.thread?.length ? ` (+${p.thread.length})` : '') },
];

function printPost(p: any): Promise<void> {
  return printObject(
    [
      ['id', p.id],
      ['status', p.status],
      ['batch', p.batch_id],
      ['category', p.category],
      ['content', p.content],
      ...p.thread.map((t: string, i: number) => [`thread ${i + 2}`, t] as [string, unknown]),
      ['source', p.source_title ? `${p.source_title} (${p.source_url ?? p.source_name})` : ''],
      ['feedback', p.feedback ?? ''],
      ['scheduled for', p.scheduled_for ?? ''],
      ['published', p.published_at ? `${p.published_at} (${p.external_id})` : ''],
      ['image', p.image_url ?? ''],
      ['metrics', `${p.impressions} impressions, ${p.likes} likes, ${p.retweets} reposts, ${p.replies} replies (${p.engagement_rate}%)`],
      ...(p.publish_error ? [['publish error', p.publish_error] as [string, unknown]] : []),
    ],
    p,
  );
}

function registerPosts(program: Command): void {
  const post = withToken(program.command('post').description('review drafted posts: list, show, approve, reject, edit, image, metrics, publish'));

  post
    .command('list')
    .description('list posts, newest first')
    .option('--status <s>', 'pending, approved, rejected, published or failed')
    .option('--batch <id>', 'only this batch')
    .option('--search <text>', 'text in the content or source title')
    .option('--page <n>', 'page number', intOption('--page'), 1)
    .option('--page-size <n>', 'posts per page (at most 100)', intOption('--page-size'), 20)
    .action(
      action(async (opts: { status?: string; batch?: string; search?: string; page: number; pageSize: number }) => {
        const r = await api('GET', '/api/posts', undefined, { status: opts.status, batch_id: opts.batch, search: opts.search, page: opts.page, page_size: opts.pageSize });
        if (outputFormat() !== 'table') return printData(r);
        await printRows(r.items, POST_COLUMNS);
        process.stdout.write(`page ${r.page}, ${r.items.length} of ${r.total}\n`);
      }),
    );

  post
    .command('show')
    .description('show one post')
    .argument('<id>', 'post id')
    .action(action(async (id: string) => printPost(await api('GET', `/api/posts/${idArg(id)}`))));

  const decide = (status: 'approved' | 'rejected') =>
    action(async (id: string, opts: { feedback?: string; schedule?: string }) => {
      const body: Record<string, unknown> = { status };
      if (opts.feedback !== undefined) body.feedback = opts.feedback;
      if (opts.schedule !== undefined) body.scheduled_for = opts.schedule;
      const p = await api('PATCH', `/api/posts/${idArg(id)}`, body);
      if (outputFormat() !== 'table') return printData(p);
      process.stdout.write(`post ${p.id} ${p.status}${p.scheduled_for ? `, scheduled for ${p.scheduled_for}` : ''}\n`);
    });
  post
    .command('approve')
    .description('approve a post (optionally schedule it: ISO 8601, published then when an X token is configured)')
    .argument('<id>', 'post id')
    .option('--schedule <time>', 'publication time, e.g. 2030-01-01T09:00:00Z')
    .option('--feedback <text>', 'reviewer feedback (used when drafting the next batches)')
    .action(decide('approved'));
  post
    .command('reject')
    .description('reject a post')
    .argument('<id>', 'post id')
    .option('--feedback <text>', 'why (used when drafting the next batches)')
    .action(decide('rejected'));

  post
    .command('edit')
    .description('edit a post: content, thread parts, feedback, schedule')
    .argument('<id>', 'post id')
    .option('--content <text>', 'new text ("-" reads standard input)')
    .option('--content-file <file>', 'read the new text from a file')
    .option('--thread <part>', 'a follow-up part (repeat for several; replaces the thread)', (v: string, prev: string[] = []) => [...prev, v])
    .option('--no-thread', 'make it a single post')
    .option('--feedback <text>', 'reviewer feedback ("" clears it)')
    .option('--schedule <time>', 'publication time, ISO 8601')
    .option('--unschedule', 'clear the publication time')
    .action(
      action(async (id: string, opts: { content?: string; contentFile?: string; thread?: string[] | false; feedback?: string; schedule?: string; unschedule?: boolean }) => {
        const body: Record<string, unknown> = {};
        if (opts.content !== undefined && opts.contentFile !== undefined) throw new UsageError('give --content or --content-file, not both');
        if (opts.content !== undefined) body.content = opts.content === '-' ? (await readStdin()).replace(/\n$/, '') : opts.content;
        if (opts.contentFile !== undefined) body.content = readFileSync(opts.contentFile, 'utf8').replace(/\n$/, '');
        if (opts.thread === false) body.thread = [];
        else if (Array.isArray(opts.thread)) body.thread = opts.thread;
        if (opts.feedback !== undefined) body.feedback = opts.feedback;
        if (opts.schedule !== undefined && opts.unschedule) throw new UsageError('give --schedule or --unschedule, not both');
        if (opts.schedule !== undefined) body.scheduled_for = opts.schedule;
        if (opts.unschedule) body.scheduled_for = null;
        if (Object.keys(body).length === 0) throw new UsageError('nothing to change: give --content, --thread, --feedback or --schedule');
        const p = await api('PATCH', `/api/posts/${idArg(id)}`, body);
        if (outputFormat() !== 'table') return printData(p);
        await printPost(p);
      }),
    );

  post
    .command('image')
    .description('upload the image of a post (PNG, JPEG, GIF or WebP)')
    .argument('<id>', 'post id')
    .argument('<file>', 'image file')
    .action(
      action(async (id: string, file: string) => {
        const data = readFileSync(file);
        const boundary = `----ctl${randomBytes(8).toString('hex')}`;
        const raw = Buffer.concat([
          Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${basename(file).replace(/"/g, '')}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
          data,
          Buffer.from(`\r\n--${boundary}--\r\n`),
        ]);
        const r = await request<any>({
          host: HOST,
          method: 'POST',
          path: `/api/posts/${idArg(id)}/image`,
          raw: { data: raw, contentType: `multipart/form-data; boundary=${boundary}` },
          headers: authHeaders(),
        });
        if (outputFormat() !== 'table') return printData(r);
        process.stdout.write(`${r.message}: ${r.image_url}\n`);
      }),
    );

  post
    .command('metrics')
    .description('show the metrics of a post, or record them by hand with the options')
    .argument('<id>', 'post id')
    .option('--impressions <n>', 'impressions', intOption('--impressions'))
    .option('--likes <n>', 'likes', intOption('--likes'))
    .option('--retweets <n>', 'reposts', intOption('--retweets'))
    .option('--replies <n>', 'replies', intOption('--replies'))
    .action(
      action(async (id: string, opts: Record<string, number | undefined>) => {
        const body = Object.fromEntries(Object.entries(opts).filter(([k, v]) => v !== undefined && ['impressions', 'likes', 'retweets', 'replies'].includes(k)));
        const m = Object.keys(body).length ? await api('POST', `/api/posts/${idArg(id)}/metrics`, body) : await api('GET', `/api/posts/${idArg(id)}/metrics`);
        if (outputFormat() !== 'table') return printData(m);
        await printObject(
          [
            ['post', m.post_id],
            ['impressions', m.impressions],
            ['likes', m.likes],
            ['reposts', m.retweets],
            ['replies', m.replies],
            ['engagement %', m.engagement_rate],
            ['source', m.source ?? ''],
            ['updated', m.updated_at ?? ''],
          ],
          m,
        );
      }),
    );

  post
    .command('publish')
    .description('publish an approved post on X now')
    .argument('<id>', 'post id')
    .action(
      action(async (id: string) => {
        const p = await api('POST', `/api/posts/${idArg(id)}/publish`);
        if (outputFormat() !== 'table') return printData(p);
        process.stdout.write(`post ${p.id} published (${p.external_ids.join(', ')})\n`);
      }),
    );

  post
    .command('fetch-metrics')
    .description('fetch public metrics from X for recently published posts')
    .action(
      action(async () => {
        const r = await api('POST', '/api/metrics/fetch');
        if (outputFormat() !== 'table') return printData(r);
        process.stdout.write(`updated ${r.updated} of ${r.requested} published post(s)\n`);
        for (const e of r.errors) process.stdout.write(`  post ${e.post_id ?? '?'} (${e.external_id}): ${e.detail}\n`);
      }),
    );
}

// ----------------------------------------------------------------------------- sources and categories

const SOURCE_COLUMNS: Column<any>[] = [
  { header: 'id', get: (s) => s.id },
  { header: 'name', get: (s) => s.name },
  { header: 'type', get: (s) => s.source_type },
  { header: 'category', get: (s) => s.category },
  { header: 'active', get: (s) => (s.is_active ? 'yes' : 'no') },
  { header: 'health', get: (s) => (s.healthy === null ? '-' : s.healthy ? 'ok' : `FAILING (${short(s.last_error, 40)})`) },
  { header: 'url', get: (s) => s.url },
];

function registerSources(program: Command): void {
  const source = withToken(program.command('source').description('content sources (hackernews, rss/atom) and their health'));
  source
    .command('list')
    .description('list sources with their health')
    .action(action(async () => printRows(await api<any[]>('GET', '/api/sources'), SOURCE_COLUMNS)));
  source
    .command('show')
    .description('show one source')
    .argument('<id>', 'source id')
    .action(
      action(async (id: string) => {
        const s = await api('GET', `/api/sources/${idArg(id)}`);
        await printObject(Object.entries(s), s);
      }),
    );
  source
    .command('add')
    .description('add a source')
    .argument('<name>', 'display name')
    .requiredOption('--type <type>', 'hackernews or rss (RSS and Atom)')
    .option('--source-url <url>', 'feed URL; for hackernews a news.ycombinator.com page (top, best, newest, ask, show) or an API list URL (empty: top stories)', '')
    .option('--category <name>', 'category (created when new)', '')
    .option('--inactive', 'add it switched off')
    .action(
      action(async (name: string, opts: { type: string; sourceUrl: string; category: string; inactive?: boolean }) => {
        const s = await api('POST', '/api/sources', { name, source_type: opts.type, url: opts.sourceUrl, category: opts.category, is_active: !opts.inactive });
        if (outputFormat() !== 'table') return printData(s);
        process.stdout.write(`source ${s.id} added\n`);
      }),
    );
  source
    .command('update')
    .description('change a source')
    .argument('<id>', 'source id')
    .option('--name <name>', 'display name')
    .option('--type <type>', 'hackernews or rss')
    .option('--source-url <url>', 'feed or Hacker News URL')
    .option('--category <name>', 'category')
    .option('--active <bool>', 'true or false', boolOption('--active'))
    .action(
      action(async (id: string, opts: { name?: string; type?: string; sourceUrl?: string; category?: string; active?: boolean }) => {
        const body: Record<string, unknown> = { name: opts.name, source_type: opts.type, url: opts.sourceUrl, category: opts.category, is_active: opts.active };
        for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
        if (Object.keys(body).length === 0) throw new UsageError('nothing to change: give --name, --type, --source-url, --category or --active');
        const s = await api('PATCH', `/api/sources/${idArg(id)}`, body);
        if (outputFormat() !== 'table') return printData(s);
        process.stdout.write(`source ${s.id} updated\n`);
      }),
    );
  source
    .command('rm')
    .description('delete a source')
    .argument('<id>', 'source id')
    .action(
      action(async (id: string) => {
        await api('DELETE', `/api/sources/${idArg(id)}`);
        if (outputFormat() === 'table') process.stdout.write(`source ${id} deleted\n`);
      }),
    );

  const category = withToken(program.command('category').description('post and source categories'));
  const CATEGORY_COLUMNS: Column<any>[] = [
    { header: 'id', get: (c) => c.id },
    { header: 'name', get: (c) => c.name },
    { header: 'active', get: (c) => (c.is_active ? 'yes' : 'no') },
  ];
  category
    .command('list')
    .description('list categories')
    .action(action(async () => printRows(await api<any[]>('GET', '/api/categories'), CATEGORY_COLUMNS)));
  category
    .command('add')
    .description('add a category')
    .argument('<name>', 'name (unique, case-insensitive)')
    .option('--inactive', 'add it switched off (its sources are skipped by runs)')
    .action(
      action(async (name: string, opts: { inactive?: boolean }) => {
        const c = await api('POST', '/api/categories', { name, is_active: !opts.inactive });
        if (outputFormat() !== 'table') return printData(c);
        process.stdout.write(`category ${c.id} added\n`);
      }),
    );
  category
    .command('update')
    .description('rename a category (its sources and posts follow) or switch it on or off')
    .argument('<id>', 'category id')
    .option('--name <name>', 'new name')
    .option('--active <bool>', 'true or false', boolOption('--active'))
    .action(
      action(async (id: string, opts: { name?: string; active?: boolean }) => {
        const body: Record<string, unknown> = {};
        if (opts.name !== undefined) body.name = opts.name;
        if (opts.active !== undefined) body.is_active = opts.active;
        if (Object.keys(body).length === 0) throw new UsageError('nothing to change: give --name or --active');
        const c = await api('PATCH', `/api/categories/${idArg(id)}`, body);
        if (outputFormat() !== 'table') return printData(c);
        process.stdout.write(`category ${c.id} updated\n`);
      }),
    );
}

// ----------------------------------------------------------------------------- style and proposals

function printStyle(s: any): Promise<void> {
  return printObject(
    [
      ['version', s.version],
      ['tone', s.tone],
      ['topics', s.topics.join(', ')],
      ['hashtag policy', s.hashtag_policy],
      ['threads', s.thread_preference ? 'yes' : 'no'],
      ['origin', s.origin],
      ['updated', s.updated_at],
    ],
    s,
  );
}

function registerStyle(program: Command): void {
  const style = withToken(program.command('style').description('the drafting style (versioned)'));
  style
    .command('get')
    .description('show the current style')
    .action(action(async () => printStyle(await api('GET', '/api/style'))));
  style
    .command('set')
    .description('change the style; every change is a new version')
    .option('--tone <text>', 'tone of voice')
    .option('--topics <list>', 'comma-separated topics ("" clears them)')
    .option('--hashtags <policy>', 'always or never')
    .option('--threads <bool>', 'allow threads: true or false', boolOption('--threads'))
    .action(
      action(async (opts: { tone?: string; topics?: string; hashtags?: string; threads?: boolean }) => {
        const body: Record<string, unknown> = {};
        if (opts.tone !== undefined) body.tone = opts.tone;
        if (opts.topics !== undefined) body.topics = opts.topics.split(',').map((t) => t.trim()).filter(Boolean);
        if (opts.hashtags !== undefined) body.hashtag_policy = opts.hashtags;
        if (opts.threads !== undefined) body.thread_preference = opts.threads;
        if (Object.keys(body).length === 0) throw new UsageError('nothing to change: give --tone, --topics, --hashtags or --threads');
        await printStyle(await api('PUT', '/api/style', body));
      }),
    );
  style
    .command('history')
    .description('style versions, newest first')
    .option('--limit <n>', 'how many', intOption('--limit'), 20)
    .action(
      action(async (opts: { limit: number }) => {
        const rows = await api<any[]>('GET', '/api/style/history', undefined, { limit: opts.limit });
        await printRows(rows, [
          { header: 'version', get: (s) => s.version },
          { header: 'tone', get: (s) => short(s.tone, 30) },
          { header: 'topics', get: (s) => short(s.topics.join(', '), 30) },
          { header: 'hashtags', get: (s) => s.hashtag_policy },
          { header: 'threads', get: (s) => (s.thread_preference ? 'yes' : 'no') },
          { header: 'origin', get: (s) => s.origin },
          { header: 'updated', get: (s) => s.updated_at },
        ]);
      }),
    );

  const proposal = withToken(program.command('proposal').description('style proposals made by the model from the best and worst posts'));
  const PROPOSAL_COLUMNS: Column<any>[] = [
    { header: 'id', get: (p) => p.id },
    { header: 'status', get: (p) => p.status },
    { header: 'title', get: (p) => short(p.title, 40) },
    { header: 'changes', get: (p) => short(JSON.stringify(p.proposed_value), 60) },
    { header: 'created', get: (p) => p.created_at },
  ];
  proposal
    .command('list')
    .description('list proposals, newest first')
    .option('--status <s>', 'pending, approved or rejected')
    .action(action(async (opts: { status?: string }) => printRows(await api<any[]>('GET', '/api/proposals', undefined, { status: opts.status }), PROPOSAL_COLUMNS)));
  proposal
    .command('show')
    .description('show one proposal')
    .argument('<id>', 'proposal id')
    .action(
      action(async (id: string) => {
        const p = await api('GET', `/api/proposals/${idArg(id)}`);
        await printObject(
          [
            ['id', p.id],
            ['status', p.status],
            ['title', p.title],
            ['rationale', p.rationale],
            ['evidence', p.evidence.join('; ')],
            ['current', JSON.stringify(p.current_value)],
            ['proposed', JSON.stringify(p.proposed_value)],
            ['style version', p.style_version_id ?? ''],
            ['created', p.created_at],
            ['decided', p.decided_at ?? ''],
          ],
          p,
        );
      }),
    );
  const decide = (status: 'approved' | 'rejected') =>
    action(async (id: string) => {
      const p = await api('PATCH', `/api/proposals/${idArg(id)}`, { status });
      if (outputFormat() !== 'table') return printData(p);
      process.stdout.write(`proposal ${p.id} ${p.status}${p.style_version_id ? ` (style version ${p.style_version_id})` : ''}\n`);
    });
  proposal.command('approve').description('approve a proposal: its changes become a new style version').argument('<id>', 'proposal id').action(decide('approved'));
  proposal.command('reject').description('reject a proposal').argument('<id>', 'proposal id').action(decide('rejected'));
  proposal
    .command('generate')
    .description('ask the model for new proposals')
    .action(
      action(async () => {
        const r = await api('POST', '/api/proposals/generate');
        if (outputFormat() !== 'table') return printData(r);
        await printRows(r.proposals, PROPOSAL_COLUMNS);
        for (const d of r.dropped) process.stderr.write(`dropped: ${d.reason}\n`);
      }),
    );
}

export function register(program: Command): void {
  registerPipeline(program);
  registerPosts(program);
  registerSources(program);
  registerStyle(program);
}
