/** `ctl gateway memory …`: the gateway's persistent memory (/api/memory*). */
import type { Command } from 'commander';
import { request } from './client.js';
import { outputFormat, printData, printObject, printRows } from './output.js';
import { action, collect, intOption, UsageError } from './run.js';

interface MemoryView {
  id: string;
  key: string;
  content: string;
  type: string;
  scope: string;
  sessionId: string | null;
  apiKeyId: string | null;
  metadata: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
  expiresAt: string | null;
  score?: number;
}

const enc = encodeURIComponent;
const short = (s: string, n = 60) => (s.length > n ? `${s.slice(0, n - 3)}...` : s);

/** `--expires`: an ISO time, or a duration from now (30m, 12h, 7d). */
export function expiryOf(v: string, now = Date.now()): string {
  const m = /^(\d+)([smhd])$/.exec(v);
  if (m) return new Date(now + Number(m[1]) * { s: 1e3, m: 6e4, h: 3.6e6, d: 8.64e7 }[m[2] as 's']).toISOString();
  if (Number.isNaN(Date.parse(v))) throw new UsageError(`--expires: ${v} is neither an ISO time nor a duration like 12h or 7d`);
  return v;
}

function metadataOf(pairs: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of pairs) {
    const i = p.indexOf('=');
    if (i <= 0) throw new UsageError(`--meta ${p}: expected key=value`);
    out[p.slice(0, i)] = p.slice(i + 1);
  }
  return out;
}

const columns = [
  { header: 'id', get: (m: MemoryView) => m.id },
  { header: 'type', get: (m: MemoryView) => m.type },
  { header: 'scope', get: (m: MemoryView) => (m.scope === 'apiKey' ? `key:${m.apiKeyId}` : m.scope === 'session' ? `session:${m.sessionId}` : 'global') },
  { header: 'key', get: (m: MemoryView) => m.key },
  { header: 'content', get: (m: MemoryView) => short(m.content.replace(/\s+/g, ' ')) },
  { header: 'expires', get: (m: MemoryView) => m.expiresAt ?? '' },
];

export function registerMemory(g: Command, auth: () => Record<string, string>): void {
  const api = <T>(method: string, path: string, body?: unknown, query?: Record<string, string | number | undefined>) => request<T>({ host: 'gateway', method, path, body, query, headers: auth() });
  const mem = g.command('memory').description('persistent memory added to chat requests (/api/memory*): list, add, get, set, rm, search, stats, health, clear');

  mem
    .command('list')
    .description('memories, newest first')
    .option('--api-key-id <id>', 'of one API key')
    .option('--session <id>', 'of one session')
    .option('--type <type>', 'FACTUAL, EPISODIC, SEMANTIC or PROCEDURAL')
    .option('--scope <scope>', 'global, apiKey or session')
    .option('-q, --query <text>', 'full-text filter')
    .option('--limit <n>', 'per page (1-500)', intOption('--limit'), 50)
    .option('--page <n>', 'page number', intOption('--page'))
    .action(
      action(async (o: { apiKeyId?: string; session?: string; type?: string; scope?: string; query?: string; limit: number; page?: number }) => {
        const r = await api<{ memories: MemoryView[]; total: number }>('GET', '/api/memory', undefined, { apiKeyId: o.apiKeyId, sessionId: o.session, type: o.type, scope: o.scope, q: o.query, limit: o.limit, page: o.page });
        await printRows(r.memories, columns, r);
        if (outputFormat() === 'table' && r.total > r.memories.length) process.stderr.write(`${r.memories.length} of ${r.total}\n`);
      }),
    );
  mem
    .command('add <content>')
    .description('store a memory; prints its id')
    .option('--key <key>', 'a short label')
    .option('--type <type>', 'FACTUAL (default), EPISODIC, SEMANTIC or PROCEDURAL')
    .option('--api-key-id <id>', 'only for this API key')
    .option('--session <id>', 'only for this session (X-Gateway-Session-Id)')
    .option('--scope <scope>', 'global, apiKey or session (default: from the ids given)')
    .option('--expires <when>', 'ISO time or a duration from now (30m, 12h, 7d)')
    .option('--meta <key=value>', 'metadata (repeatable)', collect, [])
    .action(
      action(async (content: string, o: { key?: string; type?: string; apiKeyId?: string; session?: string; scope?: string; expires?: string; meta: string[] }) => {
        const r = await api<{ id: string; memory: MemoryView }>('POST', '/api/memory', {
          content,
          ...(o.key ? { key: o.key } : {}),
          ...(o.type ? { type: o.type } : {}),
          ...(o.apiKeyId ? { apiKeyId: o.apiKeyId } : {}),
          ...(o.session ? { sessionId: o.session } : {}),
          ...(o.scope ? { scope: o.scope } : {}),
          ...(o.expires ? { expiresAt: expiryOf(o.expires) } : {}),
          ...(o.meta.length ? { metadata: metadataOf(o.meta) } : {}),
        });
        if (outputFormat() !== 'table') return printData(r.memory);
        process.stdout.write(`${r.id}\n`);
      }),
    );
  mem
    .command('get <id>')
    .description('one memory')
    .action(
      action(async (id: string) => {
        const m = await api<MemoryView>('GET', `/api/memory/${enc(id)}`);
        await printObject(
          [
            ['id', m.id],
            ['type', m.type],
            ['scope', m.scope],
            ['api key', m.apiKeyId ?? ''],
            ['session', m.sessionId ?? ''],
            ['key', m.key],
            ['content', m.content],
            ['metadata', JSON.stringify(m.metadata)],
            ['created', m.createdAt],
            ['expires', m.expiresAt ?? ''],
          ],
          m,
        );
      }),
    );
  mem
    .command('set <id>')
    .description('change a memory')
    .option('--content <text>', 'new content')
    .option('--key <key>', 'new label')
    .option('--type <type>', 'new type')
    .option('--expires <when>', 'ISO time, a duration from now, or "never"')
    .action(
      action(async (id: string, o: { content?: string; key?: string; type?: string; expires?: string }) => {
        const m = await api<MemoryView>('PUT', `/api/memory/${enc(id)}`, {
          ...(o.content !== undefined ? { content: o.content } : {}),
          ...(o.key !== undefined ? { key: o.key } : {}),
          ...(o.type ? { type: o.type } : {}),
          ...(o.expires !== undefined ? { expiresAt: o.expires === 'never' ? null : expiryOf(o.expires) } : {}),
        });
        if (outputFormat() !== 'table') return printData(m);
        process.stdout.write(`updated ${m.id}\n`);
      }),
    );
  mem
    .command('rm <id>')
    .description('delete a memory')
    .action(
      action(async (id: string) => {
        const r = await api<{ id: string }>('DELETE', `/api/memory/${enc(id)}`);
        if (outputFormat() !== 'table') return printData(r);
        process.stdout.write(`deleted ${r.id}\n`);
      }),
    );
  mem
    .command('search <query>')
    .description('memories ranked by full-text relevance (FTS5, BM25)')
    .option('--api-key-id <id>', 'of one API key')
    .option('--session <id>', 'of one session')
    .option('--limit <n>', 'how many (1-200)', intOption('--limit'), 20)
    .action(
      action(async (query: string, o: { apiKeyId?: string; session?: string; limit: number }) => {
        const r = await api<{ results: MemoryView[] }>('GET', '/api/memory/search', undefined, { q: query, apiKeyId: o.apiKeyId, sessionId: o.session, limit: o.limit });
        await printRows(r.results, [{ header: 'score', get: (m: MemoryView) => (m.score ?? 0).toFixed(2) }, ...columns], r);
      }),
    );
  mem
    .command('stats')
    .description('counts by type and scope')
    .action(
      action(async () => {
        const s = await api<{ total: number; expired: number; byType: Record<string, number>; byScope: Record<string, number>; apiKeys: number; sessions: number; bytes: number }>('GET', '/api/memory/stats');
        await printObject(
          [
            ['memories', s.total],
            ['expired', s.expired],
            ['by type', Object.entries(s.byType).map(([k, v]) => `${k} ${v}`).join(', ')],
            ['by scope', Object.entries(s.byScope).map(([k, v]) => `${k} ${v}`).join(', ')],
            ['api keys', s.apiKeys],
            ['sessions', s.sessions],
            ['bytes', s.bytes],
          ],
          s,
        );
      }),
    );
  mem
    .command('health')
    .description('the full-text index and the injection settings; exit status 1 when degraded')
    .action(
      action(async () => {
        const h = await api<{ status: string; fts5: string; memories: number; injection: { enabled: boolean; maxTokens: number; maxItems: number } }>('GET', '/api/memory/health');
        await printObject(
          [
            ['status', h.status],
            ['fts5', h.fts5],
            ['memories', h.memories],
            ['injection', h.injection.enabled ? `on, up to ${h.injection.maxItems} memories and ${h.injection.maxTokens} tokens` : 'off'],
          ],
          h,
        );
      }),
    );
  mem
    .command('clear')
    .description('delete memories selected by the options; --all deletes every one')
    .option('--api-key-id <id>', 'of one API key')
    .option('--session <id>', 'of one session')
    .option('--type <type>', 'of one type')
    .option('--scope <scope>', 'of one scope')
    .option('--expired', 'only the expired ones')
    .option('--all', 'every memory')
    .action(
      action(async (o: { apiKeyId?: string; session?: string; type?: string; scope?: string; expired?: boolean; all?: boolean }) => {
        const filter = { ...(o.apiKeyId ? { apiKeyId: o.apiKeyId } : {}), ...(o.session ? { sessionId: o.session } : {}), ...(o.type ? { type: o.type } : {}), ...(o.scope ? { scope: o.scope } : {}), ...(o.expired ? { expired: true } : {}) };
        if (Object.keys(filter).length === 0 && !o.all) throw new UsageError('say what to clear (--api-key-id, --session, --type, --scope, --expired) or --all');
        const r = await api<{ cleared: number }>('POST', '/api/memory/clear', filter);
        if (outputFormat() !== 'table') return printData(r);
        process.stdout.write(`cleared ${r.cleared}\n`);
      }),
    );
}
