/** `ctl gateway task list|create|show|approve|message|cancel|rm` (/api/v1/agents/tasks). */
import type { Command } from 'commander';
import { request } from './client.js';
import { outputFormat, printData, printRows } from './output.js';
import { action, intOption } from './run.js';

interface Task {
  id: string;
  providerId: string;
  status: string;
  prompt: string;
  url: string | null;
  error: string | null;
  createdAt: string;
}

export function registerAgentTasks(g: Command, auth: () => Record<string, string>): void {
  const api = <T>(method: string, path: string, body?: unknown, query?: Record<string, string | number | undefined>) => request<T>({ host: 'gateway', method, path, body, query, headers: auth() });
  const t = g.command('task').description('tasks handed to cloud agent providers (/api/v1/agents/tasks): list, create, show, approve, message, cancel, rm');
  const line = (x: Task) => `${x.id} ${x.status}${x.url ? ` ${x.url}` : ''}${x.error ? ` (${x.error})` : ''}\n`;
  t.command('list')
    .description('tasks, newest first')
    .option('--provider <id>', 'only this provider\'s')
    .option('--status <status>', 'queued, running, awaiting_approval, completed, failed or cancelled')
    .option('--limit <n>', 'how many (1-500)', intOption('--limit'), 50)
    .action(
      action(async (o: { provider?: string; status?: string; limit: number }) => {
        const r = await api<{ tasks: Task[] }>('GET', '/api/v1/agents/tasks', undefined, { provider: o.provider, status: o.status, limit: o.limit });
        await printRows(
          r.tasks,
          [
            { header: 'id', get: (x) => x.id },
            { header: 'provider', get: (x) => x.providerId },
            { header: 'status', get: (x) => x.status },
            { header: 'prompt', get: (x) => x.prompt.slice(0, 50) },
            { header: 'created', get: (x) => x.createdAt },
          ],
          r,
        );
      }),
    );
  t.command('create <provider> <prompt>')
    .description('hand a prompt to a cloud agent provider (ctl.yaml gateway.agent_providers)')
    .requiredOption('--repo <repo>', 'the source repository (sent as source.repo)')
    .option('--branch <branch>', 'the branch (source.branch)')
    .action(
      action(async (provider: string, prompt: string, o: { repo?: string; branch?: string }) => {
        const source = { repo: o.repo!, ...(o.branch ? { branch: o.branch } : {}) };
        const r = await api<{ task: Task }>('POST', '/api/v1/agents/tasks', { providerId: provider, prompt, source });
        if (outputFormat() !== 'table') return printData(r);
        process.stdout.write(line(r.task));
      }),
    );
  t.command('show <id>')
    .description('a task, its status refreshed from the provider')
    .action(action(async (id: string) => printData((await api<{ task: Task }>('GET', `/api/v1/agents/tasks/${encodeURIComponent(id)}`)).task)));
  for (const verb of ['approve', 'cancel'] as const) {
    t.command(`${verb} <id>`)
      .description(verb === 'approve' ? 'approve a task that waits for approval' : 'cancel a task')
      .action(
        action(async (id: string) => {
          const r = await api<{ task: Task }>('POST', `/api/v1/agents/tasks/${encodeURIComponent(id)}`, { action: verb });
          if (outputFormat() !== 'table') return printData(r);
          process.stdout.write(line(r.task));
        }),
      );
  }
  t.command('message <id> <text>')
    .description('send the agent a message')
    .action(
      action(async (id: string, text: string) => {
        const r = await api<{ task: Task }>('POST', `/api/v1/agents/tasks/${encodeURIComponent(id)}`, { action: 'message', message: text });
        if (outputFormat() !== 'table') return printData(r);
        process.stdout.write(line(r.task));
      }),
    );
  t.command('rm <id>')
    .description('forget a task (a running one is cancelled at the provider first)')
    .action(
      action(async (id: string) => {
        const r = await api<{ cancelledUpstream: boolean }>('DELETE', `/api/v1/agents/tasks/${encodeURIComponent(id)}`);
        process.stdout.write(`deleted ${id}${r.cancelledUpstream ? ' (cancelled at the provider)' : ''}\n`);
      }),
    );
}
