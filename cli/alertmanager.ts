import { existsSync, readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import type { Command } from 'commander';
import type { RE2JS } from 're2js';
import { lazyRequire } from '../src/http/lazy.js';
import { ApiError, request, send, errorMessage } from './client.js';
import { outputFormat, printData, printRows, type Column } from './output.js';
import { action, collect, intOption, UsageError } from './run.js';

// Loaded when a command needs them, so every other `ctl` command starts fast.
const re2js = lazyRequire<typeof import('re2js')>('re2js');
const yaml = lazyRequire<typeof import('yaml')>('yaml');

/**
 * `ctl silence|alert|config ...`: the alert manager (Alertmanager API v2 on the `alertmanager`
 * server), with flags close to amtool's. Matchers are `name=value`, `name!=value`, `name=~regex`,
 * `name!~regex` (values may be double-quoted). Tables by default; `-o json|yaml` prints the API's
 * JSON; `-q` prints ids only.
 */

const HOST = 'alertmanager';

// ---- matchers, durations, times (kept here: the CLI talks HTTP and imports no component) ----------

interface ApiMatcher {
  name: string;
  value: string;
  isRegex: boolean;
  isEqual: boolean;
}

const MATCHER_RE = /^\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(=~|=|!=|!~)\s*([\s\S]*?)\s*$/;

/** One matcher in Alertmanager's syntax (same rules as the API's `filter`). */
export function parseMatcher(s: string): ApiMatcher {
  const m = MATCHER_RE.exec(s);
  if (!m) throw new UsageError(`bad matcher format: ${s}`);
  let raw = m[3]!;
  if (raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"')) raw = raw.slice(1, -1);
  const value = raw.replace(/\\(["\\n])/g, (_x, c: string) => (c === 'n' ? '\n' : c));
  const op = m[2]!;
  return { name: m[1]!, value, isRegex: op.includes('~'), isEqual: op.startsWith('=') };
}

/** Split `{a="1",b=~"x,y"}` or `a=1` into matchers (commas inside quotes do not split). */
export function parseMatcherList(s: string): ApiMatcher[] {
  let t = s.trim();
  if (t.startsWith('{')) t = t.slice(1);
  if (t.endsWith('}')) t = t.slice(0, -1);
  const parts: string[] = [];
  let cur = '';
  let quoted = false;
  let escaped = false;
  for (const c of t) {
    if (c === ',' && !quoted) {
      parts.push(cur);
      cur = '';
      continue;
    }
    if (c === '"' && !escaped) quoted = !quoted;
    escaped = c === '\\' && !escaped;
    cur += c;
  }
  if (cur.trim()) parts.push(cur);
  return parts.map(parseMatcher);
}

function matcherText(m: ApiMatcher): string {
  const op = m.isRegex ? (m.isEqual ? '=~' : '!~') : m.isEqual ? '=' : '!=';
  return `${m.name}${op}"${m.value.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : '\\' + c))}"`;
}

/** amtool's convenience: a first argument that is not a matcher is an alertname. */
function matchersFromArgs(args: string[]): ApiMatcher[] {
  const out: ApiMatcher[] = [];
  args.forEach((a, i) => {
    try {
      out.push(...parseMatcherList(a));
    } catch (e) {
      if (i === 0) out.push({ name: 'alertname', value: a, isRegex: false, isEqual: true });
      else throw e;
    }
  });
  return out;
}

const UNIT_MS: Record<string, number> = { y: 31_536_000_000, w: 604_800_000, d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000, ms: 1 };

/** Durations as Alertmanager writes them: `90m`, `1h30m`, `2d`, `1w`. */
export function parseDuration(s: string): number {
  const re = /(\d+)(ms|y|w|d|h|m|s)/gy;
  let total = 0;
  let matched = 0;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
    matched += m[0].length;
  }
  if (s === '0') return 0;
  if (!s || matched !== s.length) throw new UsageError(`not a valid duration: ${JSON.stringify(s)} (use e.g. 30m, 2h, 1d)`);
  return total;
}

function parseTime(s: string, what: string): number {
  const ms = Date.parse(s);
  if (Number.isNaN(ms)) throw new UsageError(`${what}: not an RFC3339 time: ${JSON.stringify(s)}`);
  return ms;
}

/** `2006-01-02 15:04:05 UTC`, as amtool prints times. */
function human(t: string | undefined): string {
  if (!t) return '';
  const d = new Date(t);
  if (Number.isNaN(d.getTime())) return t;
  return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

const labelsText = (ls: Record<string, string> | undefined) =>
  Object.entries(ls ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}="${v}"`)
    .join(' ');

// ---- API types -----------------------------------------------------------------------------------

interface Silence {
  id: string;
  status: { state: string };
  updatedAt: string;
  comment: string;
  createdBy: string;
  startsAt: string;
  endsAt: string;
  matchers: ApiMatcher[];
}

interface Alert {
  fingerprint: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  receivers: { name: string }[];
  status: { state: string; silencedBy: string[]; inhibitedBy: string[] };
  generatorURL?: string;
}

interface AlertGroup {
  labels: Record<string, string>;
  receiver: { name: string };
  alerts: Alert[];
}

const ALERT_COLUMNS: Column<Alert>[] = [
  { header: 'alertname', get: (a) => a.labels.alertname ?? '' },
  { header: 'starts at', get: (a) => human(a.startsAt) },
  { header: 'summary', get: (a) => a.annotations.summary ?? '' },
  { header: 'state', get: (a) => a.status.state },
  { header: 'labels', get: (a) => labelsText(Object.fromEntries(Object.entries(a.labels).filter(([k]) => k !== 'alertname'))) },
];

const SILENCE_COLUMNS: Column<Silence>[] = [
  { header: 'id', get: (s) => s.id },
  { header: 'matchers', get: (s) => s.matchers.map(matcherText).join(' ') },
  { header: 'state', get: (s) => s.status.state },
  { header: 'ends at', get: (s) => human(s.endsAt) },
  { header: 'created by', get: (s) => s.createdBy },
  { header: 'comment', get: (s) => s.comment },
];

const GROUP_COLUMNS: Column<AlertGroup>[] = [
  { header: 'receiver', get: (g) => g.receiver.name },
  { header: 'labels', get: (g) => labelsText(g.labels) || '{}' },
  { header: 'alerts', get: (g) => g.alerts.length },
  { header: 'suppressed', get: (g) => g.alerts.filter((a) => a.status.state === 'suppressed').length },
];

async function postSilence(body: Record<string, unknown>): Promise<string> {
  const r = await request<{ silenceID: string }>({ host: HOST, method: 'POST', path: '/api/v2/silences', body });
  return r.silenceID;
}

function printIds(ids: string[]): void {
  if (ids.length) process.stdout.write(ids.join('\n') + '\n');
}

// ---- route testing (the API has no endpoint for it; amtool also does this locally) ----------------

interface RouteNode {
  receiver: string;
  matchers: ApiMatcher[];
  continue: boolean;
  routes: RouteNode[];
  text: string;
}

const TYPE_ORDER = (m: ApiMatcher) => (m.isRegex ? 2 : 0) + (m.isEqual ? 0 : 1);

function compileRoute(r: Record<string, any>, parentReceiver: string): RouteNode {
  const receiver = r.receiver || parentReceiver;
  const matchers: ApiMatcher[] = [];
  for (const [k, v] of Object.entries((r.match ?? {}) as Record<string, string>)) matchers.push({ name: k, value: String(v), isRegex: false, isEqual: true });
  // Alertmanager builds match_re matchers from the compiled, anchored expression.
  for (const [k, v] of Object.entries((r.match_re ?? {}) as Record<string, string>)) matchers.push({ name: k, value: `^(?:${v})$`, isRegex: true, isEqual: true });
  for (const line of (r.matchers ?? []) as string[]) matchers.push(...parseMatcherList(line));
  matchers.sort((a, b) => (a.name !== b.name ? (a.name < b.name ? -1 : 1) : a.value !== b.value ? (a.value < b.value ? -1 : 1) : TYPE_ORDER(a) - TYPE_ORDER(b)));
  return {
    receiver,
    matchers,
    continue: !!r.continue,
    text: matchers.length ? `{${matchers.map(matcherText).join(',')}}` : 'default-route',
    routes: ((r.routes ?? []) as Record<string, any>[]).map((c) => compileRoute(c, receiver)),
  };
}

const regexCache = new Map<string, RE2JS>();
function matches(m: ApiMatcher, v: string): boolean {
  let ok: boolean;
  if (m.isRegex) {
    let re = regexCache.get(m.value);
    if (!re) regexCache.set(m.value, (re = re2js().RE2JS.compile(`^(?:${m.value})$`)));
    ok = re.matches(v);
  } else ok = v === m.value;
  return m.isEqual ? ok : !ok;
}

function matchRoutes(r: RouteNode, labels: Record<string, string>): RouteNode[] {
  if (!r.matchers.every((m) => matches(m, labels[m.name] ?? ''))) return [];
  const all: RouteNode[] = [];
  for (const c of r.routes) {
    const got = matchRoutes(c, labels);
    all.push(...got);
    if (got.length && !c.continue) break;
  }
  return all.length ? all : [r];
}

/** The tree as amtool draws it; with `hits`, only the paths to matching routes. */
function drawTree(r: RouteNode, prefix: string, last: boolean, hits?: { keep: Set<RouteNode>; leaves: RouteNode[] }): string {
  let line = r.text;
  if (!hits) line += `${r.continue ? '  continue: true' : ''}  receiver: ${r.receiver}`;
  else if (hits.leaves.includes(r)) line += `  receiver: ${r.receiver}`;
  let out = `${prefix}${last ? '└── ' : '├── '}${line}\n`;
  const kids = hits ? r.routes.filter((c) => hits.keep.has(c)) : r.routes;
  kids.forEach((c, i) => {
    out += drawTree(c, prefix + (last ? '    ' : '│   '), i === kids.length - 1, hits);
  });
  return out;
}

function ancestorsOf(root: RouteNode, targets: RouteNode[]): Set<RouteNode> {
  const keep = new Set<RouteNode>();
  const walk = (n: RouteNode, path: RouteNode[]): void => {
    if (targets.includes(n)) for (const p of [...path, n]) keep.add(p);
    for (const c of n.routes) walk(c, [...path, n]);
  };
  walk(root, []);
  return keep;
}

async function loadRouteTree(): Promise<RouteNode> {
  const status = await request<{ config: { original: string } }>({ host: HOST, path: '/api/v2/status' });
  const cfg = yaml().parse(status.config.original, { version: '1.1' }) as { route: Record<string, any> };
  return compileRoute(cfg.route, cfg.route.receiver);
}

// ---- commands --------------------------------------------------------------------------------------

export function register(program: Command): void {
  registerSilence(program);
  registerAlert(program);
  registerConfig(program);
}

function registerSilence(program: Command): void {
  const silence = program.command('silence').description('alert manager silences: add, query, update, expire, import (amtool-style)');

  silence
    .command('add')
    .description('add a silence for the given matchers and print its id')
    .argument('<matchers...>', 'matchers: name=value, name!=value, name=~regex, name!~regex (a bare first word is an alertname)')
    .requiredOption('-c, --comment <text>', 'why the silence exists (required)')
    .option('-a, --author <name>', 'creator of the silence (default: $USER)')
    .option('-d, --duration <d>', 'how long the silence lasts (e.g. 30m, 2h, 1d)', '1h')
    .option('--start <time>', 'start (RFC3339; default now)')
    .option('--end <time>', 'end (RFC3339; default start + duration)')
    .action(
      action(async (args: string[], o: { comment: string; author?: string; duration: string; start?: string; end?: string }) => {
        const matchers = matchersFromArgs(args);
        if (matchers.length === 0) throw new UsageError('give at least one matcher');
        const start = o.start ? parseTime(o.start, '--start') : Date.now();
        const end = o.end ? parseTime(o.end, '--end') : start + parseDuration(o.duration);
        if (end <= start) throw new UsageError('the silence must end after it starts');
        const id = await postSilence({
          matchers,
          startsAt: new Date(start).toISOString(),
          endsAt: new Date(end).toISOString(),
          createdBy: o.author ?? process.env.USER ?? userInfo().username,
          comment: o.comment,
        });
        if (outputFormat() !== 'table') return printData({ silenceID: id });
        printIds([id]);
      }),
    );

  silence
    .command('query')
    .alias('ls')
    .description('list silences (active and pending by default), optionally matching matchers exactly')
    .argument('[matchers...]', 'only silences having these exact matchers (name=value, name=~regex, ...)')
    .option('--expired', 'show expired silences instead')
    .option('--within <d>', 'with --expired: expired within this duration; else: ending within it')
    .option('--created-by <name>', 'only silences created by this author')
    .option('-q, --quiet', 'print ids only')
    .action(
      action(async (args: string[], o: { expired?: boolean; within?: string; createdBy?: string; quiet?: boolean }) => {
        const filter = matchersFromArgs(args).map(matcherText);
        let list = await request<Silence[]>({ host: HOST, path: '/api/v2/silences', query: { filter } });
        const now = Date.now();
        const within = o.within ? parseDuration(o.within) : undefined;
        list = list.filter((s) => {
          const end = Date.parse(s.endsAt);
          if (o.createdBy && s.createdBy !== o.createdBy) return false;
          if (o.expired) return end <= now && (within === undefined || end >= now - within);
          return end > now && (within === undefined || end <= now + within);
        });
        if (o.quiet) return printIds(list.map((s) => s.id));
        await printRows(list, SILENCE_COLUMNS);
      }),
    );

  silence
    .command('update')
    .description('change the comment or times of silences (same id when Alertmanager\'s rules allow it)')
    .argument('<ids...>', 'silence ids')
    .option('-c, --comment <text>', 'new comment')
    .option('-d, --duration <d>', 'new duration from the start')
    .option('--start <time>', 'new start (RFC3339)')
    .option('--end <time>', 'new end (RFC3339)')
    .option('-q, --quiet', 'print ids only')
    .action(
      action(async (ids: string[], o: { comment?: string; duration?: string; start?: string; end?: string; quiet?: boolean }) => {
        if (o.duration && o.end) throw new UsageError('give --duration or --end, not both');
        const updated: Silence[] = [];
        for (const id of ids) {
          const s = await request<Silence>({ host: HOST, path: `/api/v2/silence/${encodeURIComponent(id)}` }).catch((e) => {
            if (e instanceof ApiError && e.status === 404) throw new ApiError(404, `silence ${id} not found`, e.body);
            throw e;
          });
          let start = Date.parse(s.startsAt);
          let end = Date.parse(s.endsAt);
          if (o.start) start = parseTime(o.start, '--start');
          if (o.end) end = parseTime(o.end, '--end');
          if (o.duration) end = start + parseDuration(o.duration);
          const newId = await postSilence({
            id: s.id,
            matchers: s.matchers,
            startsAt: new Date(start).toISOString(),
            endsAt: new Date(end).toISOString(),
            createdBy: s.createdBy,
            comment: o.comment ?? s.comment,
          });
          updated.push(await request<Silence>({ host: HOST, path: `/api/v2/silence/${encodeURIComponent(newId)}` }));
        }
        if (o.quiet) return printIds(updated.map((s) => s.id));
        await printRows(updated, SILENCE_COLUMNS);
      }),
    );

  silence
    .command('expire')
    .alias('rm')
    .description('expire silences now (they stay listed as expired for the retention period)')
    .argument('<ids...>', 'silence ids')
    .action(
      action(async (ids: string[]) => {
        for (const id of ids) {
          const r = await send({ host: HOST, method: 'DELETE', path: `/api/v2/silence/${encodeURIComponent(id)}` });
          if (r.status === 404) throw new ApiError(404, `silence ${id} not found`, r.data);
          if (r.status >= 400) throw new ApiError(r.status, errorMessage(r.data, r.status), r.data);
        }
      }),
    );

  silence
    .command('import')
    .description('import silences from a JSON file (as `silence query -o json` writes it); unknown ids are recreated')
    .argument('[file]', 'JSON file (default: stdin)')
    .option('-f, --force', 'ignore the ids in the file and always create new silences')
    .option('-w, --worker <n>', 'parallel requests', intOption('--worker'), 8)
    .action(
      action(async (file: string | undefined, o: { force?: boolean; worker: number }) => {
        let list: Silence[];
        try {
          list = JSON.parse(readFileSync(file ?? 0, 'utf8'));
        } catch (e) {
          throw new UsageError(`cannot read silences from ${file ?? 'stdin'}: ${(e as Error).message}`);
        }
        if (!Array.isArray(list)) throw new UsageError('the file must hold a JSON array of silences');
        let next = 0;
        let done = 0;
        const errors: string[] = [];
        const worker = async () => {
          while (next < list.length) {
            const s = list[next++]!;
            const body = { id: o.force ? undefined : s.id, matchers: s.matchers, startsAt: s.startsAt, endsAt: s.endsAt, createdBy: s.createdBy, comment: s.comment };
            try {
              try {
                await postSilence(body);
              } catch (e) {
                // Like amtool: an id this server does not know is created anew.
                if (e instanceof ApiError && e.status === 404 && body.id) await postSilence({ ...body, id: undefined });
                else throw e;
              }
              done++;
            } catch (e) {
              errors.push(`${s.id ?? '(no id)'}: ${(e as Error).message}`);
            }
            if (process.stderr.isTTY) process.stderr.write(`\rimported ${done}/${list.length}`);
          }
        };
        await Promise.all(Array.from({ length: Math.max(1, Math.min(o.worker, 64)) }, worker));
        if (process.stderr.isTTY) process.stderr.write('\n');
        for (const e of errors) process.stderr.write(`Error: ${e}\n`);
        if (outputFormat() !== 'table') await printData({ imported: done, failed: errors.length });
        else process.stdout.write(`imported ${done} of ${list.length} silences\n`);
        if (errors.length) throw new ApiError(400, `${errors.length} silences could not be imported`, errors);
      }),
    );
}

function registerAlert(program: Command): void {
  const alert = program.command('alert').description('alert manager alerts: add, query, groups (amtool-style)');

  alert
    .command('query')
    .alias('ls')
    .description('list alerts; by default only active (not silenced, not inhibited) ones')
    .argument('[matchers...]', 'label matchers (a bare first word is an alertname)')
    .option('-a, --active', 'show active alerts')
    .option('-s, --silenced', 'show silenced alerts')
    .option('-i, --inhibited', 'show inhibited alerts')
    .option('-u, --unprocessed', 'show unprocessed alerts')
    .option('-r, --receiver <regex>', 'only alerts routed to a receiver matching this regex')
    .option('-q, --quiet', 'print fingerprints only')
    .action(
      action(async (args: string[], o: { active?: boolean; silenced?: boolean; inhibited?: boolean; unprocessed?: boolean; receiver?: string; quiet?: boolean }) => {
        const any = o.active || o.silenced || o.inhibited || o.unprocessed;
        const list = await request<Alert[]>({
          host: HOST,
          path: '/api/v2/alerts',
          query: {
            active: any ? !!o.active : true,
            silenced: !!o.silenced,
            inhibited: !!o.inhibited,
            unprocessed: !!o.unprocessed,
            filter: matchersFromArgs(args).map(matcherText),
            receiver: o.receiver || undefined,
          },
        });
        if (o.quiet) return printIds(list.map((a) => a.fingerprint));
        await printRows(list, ALERT_COLUMNS);
      }),
    );

  alert
    .command('add')
    .description('send an alert (firing until --end, or for the configured resolve_timeout)')
    .argument('<name>', 'alertname (or a first label name=value)')
    .argument('[labels...]', 'more labels as name=value')
    .option('--annotation <k=v>', 'an annotation (repeatable)', collect, [])
    .option('--generator-url <url>', 'link back to the source of the alert')
    .option('--start <time>', 'start (RFC3339; default now)')
    .option('--end <time>', 'end (RFC3339); an end in the past resolves the alert')
    .action(
      action(async (name: string, labelArgs: string[], o: { annotation: string[]; generatorUrl?: string; start?: string; end?: string }) => {
        const kv = (s: string, what: string): [string, string] => {
          const i = s.indexOf('=');
          if (i <= 0) throw new UsageError(`${what} must be name=value, got ${JSON.stringify(s)}`);
          return [s.slice(0, i), s.slice(i + 1).replace(/^"(.*)"$/, '$1')];
        };
        const labels: Record<string, string> = {};
        if (/^[a-zA-Z_][a-zA-Z0-9_]*=/.test(name)) Object.assign(labels, Object.fromEntries([kv(name, 'label')]));
        else labels.alertname = name;
        for (const l of labelArgs) Object.assign(labels, Object.fromEntries([kv(l, 'label')]));
        const annotations = Object.fromEntries(o.annotation.map((a) => kv(a, '--annotation')));
        const body: Record<string, unknown> = { labels, annotations };
        if (o.generatorUrl) body.generatorURL = o.generatorUrl;
        if (o.start) body.startsAt = new Date(parseTime(o.start, '--start')).toISOString();
        if (o.end) body.endsAt = new Date(parseTime(o.end, '--end')).toISOString();
        await request({ host: HOST, method: 'POST', path: '/api/v2/alerts', body: [body] });
      }),
    );

  alert
    .command('groups')
    .description('list alert groups (one per route and group_by values)')
    .argument('[matchers...]', 'label matchers')
    .option('-r, --receiver <regex>', 'only groups of receivers matching this regex')
    .option('--no-silenced', 'leave out silenced alerts')
    .option('--no-inhibited', 'leave out inhibited alerts')
    .action(
      action(async (args: string[], o: { receiver?: string; silenced: boolean; inhibited: boolean }) => {
        const groups = await request<AlertGroup[]>({
          host: HOST,
          path: '/api/v2/alerts/groups',
          query: { filter: matchersFromArgs(args).map(matcherText), receiver: o.receiver || undefined, silenced: o.silenced, inhibited: o.inhibited },
        });
        await printRows(groups, GROUP_COLUMNS);
      }),
    );
}

function registerConfig(program: Command): void {
  const config = program.command('config').description("alert manager configuration as the daemon runs it (alertmanager.yml, secrets hidden)");

  config
    .command('check')
    .description('validate alertmanager.yml files and the template files they name, as amtool check-config does (no daemon needed)')
    .argument('<file...>', 'configuration files')
    .action(
      action(async (files: string[]) => {
        const { checkConfigFile } = await import('./config-check.js');
        // amtool's wording, on stderr as its argument parser prints it: every path must exist first.
        const fatal = (message: string) => {
          process.stderr.write(`ctl: error: ${message}\n\n`);
          process.exit(1);
        };
        const missing = files.find((f) => !existsSync(f));
        if (missing !== undefined) fatal(`path '${missing}' does not exist`);
        let failed = 0;
        for (const file of files) if (!checkConfigFile(file, (s) => process.stdout.write(s))) failed++;
        if (failed > 0) fatal(`failed to validate ${failed} file(s)`);
      }),
    );

  config
    .command('show')
    .description('print the running alertmanager configuration')
    .action(
      action(async () => {
        const status = await request<{ config: { original: string } }>({ host: HOST, path: '/api/v2/status' });
        if (outputFormat() !== 'table') return printData(status.config);
        process.stdout.write(status.config.original);
      }),
    );

  const routes = config
    .command('routes')
    .description('print the routing tree')
    .action(
      action(async () => {
        process.stdout.write('Routing tree:\n.\n' + drawTree(await loadRouteTree(), '', true));
      }),
    );
  routes
    .command('show')
    .description('print the routing tree')
    .action(
      action(async () => {
        process.stdout.write('Routing tree:\n.\n' + drawTree(await loadRouteTree(), '', true));
      }),
    );
  routes
    .command('test')
    .description('which receivers would get an alert with these labels')
    .argument('[labels...]', 'labels as name=value')
    .option('--tree', 'print the matching part of the routing tree')
    .option('--verify-receivers <list>', 'exit 1 unless the receivers are exactly these (comma-separated)')
    .action(
      action(async (args: string[], o: { tree?: boolean; verifyReceivers?: string }) => {
        const labels: Record<string, string> = {};
        for (const m of args.flatMap((a) => parseMatcherList(a))) {
          if (m.isRegex || !m.isEqual) throw new UsageError(`labels must be name=value, got ${matcherText(m)}`);
          labels[m.name] = m.value;
        }
        const tree = await loadRouteTree();
        const hit = matchRoutes(tree, labels);
        const names = hit.map((r) => r.receiver);
        if (o.tree) process.stdout.write('Matching routes:\n.\n' + drawTree(tree, '', true, { keep: ancestorsOf(tree, hit), leaves: hit }) + '\n\n');
        if (outputFormat() !== 'table') await printData({ receivers: names });
        else process.stdout.write(names.join(',') + '\n');
        if (o.verifyReceivers !== undefined && o.verifyReceivers !== names.join(',')) {
          throw new ApiError(1, 'Expected receivers did not match resolved receivers.', null);
        }
      }),
    );
}
