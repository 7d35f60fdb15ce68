/** `ctl gateway a2a …`: the gateway's A2A server (POST /a2a and /api/a2a/*). */
import type { Command } from 'commander';
import { ApiError, request } from './client.js';
import { outputFormat, printData, printObject, printRows } from './output.js';
import { action, collect, intOption, UsageError } from './run.js';

interface TaskView {
  id: string;
  skill: string;
  state: string;
  error: string | null;
  artifacts: ({ type: 'text'; text: string } | { type: 'data'; data: unknown })[];
  metadata: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

const enc = encodeURIComponent;

export function registerA2a(g: Command, auth: () => Record<string, string>): void {
  const api = <T>(method: string, path: string, body?: unknown, query?: Record<string, string | number | undefined>) => request<T>({ host: 'gateway', method, path, body, query, headers: auth() });
  const a = g.command('a2a').description('the A2A server (POST /a2a, /api/a2a/*): send, tasks, get, cancel');

  a.command('send <skill> <message...>')
    .description('send a message to a built-in skill (smart-routing, quota-management, provider-discovery, cost-analysis, health-report) and print the answer')
    .option('--model <model>', 'smart-routing: the model or combo to answer with')
    .option('--meta <key=value>', 'task metadata (repeatable; numbers stay numbers)', collect, [])
    .action(
      action(async (skill: string, words: string[], o: { model?: string; meta: string[] }) => {
        const metadata: Record<string, unknown> = {};
        for (const p of o.meta) {
          const i = p.indexOf('=');
          if (i <= 0) throw new UsageError(`--meta ${p}: expected key=value`);
          const v = p.slice(i + 1);
          metadata[p.slice(0, i)] = /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v;
        }
        if (o.model) metadata.model = o.model;
        const r = await api<{ result?: { task: TaskView; artifacts: TaskView['artifacts']; metadata: Record<string, unknown> }; error?: { code: number; message: string } }>('POST', '/a2a', {
          jsonrpc: '2.0',
          id: 1,
          method: 'message/send',
          params: { skill, messages: [{ role: 'user', content: words.join(' ') }], metadata },
        });
        if (r.error) throw new ApiError(400, `A2A error ${r.error.code}: ${r.error.message}`, r);
        const res = r.result!;
        if (outputFormat() !== 'table') return printData(res);
        for (const art of res.artifacts) process.stdout.write(art.type === 'text' ? `${art.text}\n` : '');
        if (res.task.state !== 'completed') {
          process.stderr.write(`task ${res.task.id} ${res.task.state}${(res.task as TaskView).error ? `: ${(res.task as TaskView).error}` : ''}\n`);
          process.exitCode = 1;
        }
      }),
    );
  a.command('tasks')
    .description('recent tasks, newest first')
    .option('--state <state>', 'submitted, working, completed, failed or cancelled')
    .option('--skill <skill>', 'of one skill')
    .option('--limit <n>', 'how many (1-200)', intOption('--limit'), 50)
    .action(
      action(async (o: { state?: string; skill?: string; limit: number }) => {
        const r = await api<{ tasks: TaskView[] }>('GET', '/api/a2a/tasks', undefined, { state: o.state, skill: o.skill, limit: o.limit });
        await printRows(
          r.tasks,
          [
            { header: 'id', get: (t) => t.id },
            { header: 'skill', get: (t) => t.skill },
            { header: 'state', get: (t) => t.state },
            { header: 'created', get: (t) => t.createdAt },
            { header: 'error', get: (t) => t.error ?? '' },
          ],
          r,
        );
      }),
    );
  a.command('get <id>')
    .description('one task with its artifacts')
    .action(
      action(async (id: string) => {
        const t = await api<TaskView>('GET', `/api/a2a/tasks/${enc(id)}`);
        await printObject(
          [
            ['id', t.id],
            ['skill', t.skill],
            ['state', t.state],
            ['error', t.error ?? ''],
            ['created', t.createdAt],
            ['updated', t.updatedAt],
            ['artifacts', t.artifacts.map((x) => (x.type === 'text' ? x.text : JSON.stringify(x.data))).join('\n')],
          ],
          t,
        );
      }),
    );
  a.command('cancel <id>')
    .description('cancel a task that is still running')
    .action(
      action(async (id: string) => {
        const t = await api<TaskView>('POST', `/api/a2a/tasks/${enc(id)}/cancel`);
        if (outputFormat() !== 'table') return printData(t);
        process.stdout.write(`${t.id} ${t.state}\n`);
      }),
    );
}
