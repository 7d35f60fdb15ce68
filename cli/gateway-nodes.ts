/** `ctl gateway node list|add|test|models|rm` (/api/provider-nodes) and `ctl gateway manifest` (the provider plugin manifest). */
import type { Command } from 'commander';
import { request } from './client.js';
import { outputFormat, printData, printRows } from './output.js';
import { action, collect } from './run.js';

export function registerNodes(g: Command, auth: () => Record<string, string>): void {
  const api = <T>(method: string, path: string, body?: unknown) => request<T>({ host: 'gateway', method, path, body, headers: auth() });
  const n = g.command('node').description('self-hosted provider endpoints (/api/provider-nodes): list, add, test, models, rm');
  n.command('list')
    .description('providers with an address of their own')
    .action(
      action(async () => {
        const r = await api<{ nodes: { id: string; kind: string; baseUrl: string; enabled: boolean; models: unknown[] }[] }>('GET', '/api/provider-nodes');
        await printRows(
          r.nodes,
          [
            { header: 'id', get: (x) => x.id },
            { header: 'kind', get: (x) => x.kind },
            { header: 'address', get: (x) => x.baseUrl },
            { header: 'enabled', get: (x) => x.enabled },
            { header: 'models', get: (x) => x.models.length },
          ],
          r,
        );
      }),
    );
  n.command('add <id> <url>')
    .description('add a node: an OpenAI-compatible (default), Anthropic-compatible or Ollama server at URL')
    .option('--kind <kind>', 'openai, anthropic, gemini or ollama', 'openai')
    .option('--api-key <key>', 'the key the node wants, if any')
    .option('--model <id>', 'a model it serves (repeatable)', collect, [])
    .action(
      action(async (id: string, url: string, o: { kind: string; apiKey?: string; model: string[] }) => {
        const v = await api<{ id: string }>('POST', '/api/provider-nodes', { id, kind: o.kind, baseUrl: url, ...(o.apiKey ? { apiKey: o.apiKey } : {}), ...(o.model.length ? { models: o.model } : {}) });
        if (outputFormat() !== 'table') return printData(v);
        process.stdout.write(`added node ${v.id}\n`);
      }),
    );
  n.command('test <id>')
    .description('try the node: its model list, or a one-token chat with --model; exits 1 when it fails')
    .option('--model <id>', 'send a one-token chat to this model')
    .action(
      action(async (id: string, o: { model?: string }) => {
        const r = await api<{ ok: boolean; latencyMs: number; error?: string; models?: number }>('POST', `/api/provider-nodes/${encodeURIComponent(id)}/test`, o.model ? { model: o.model } : {});
        if (outputFormat() !== 'table') await printData(r);
        else process.stdout.write(r.ok ? `ok in ${r.latencyMs} ms${r.models !== undefined ? ` (${r.models} models)` : ''}\n` : `failed: ${r.error}\n`);
        if (!r.ok) process.exitCode = 1;
      }),
    );
  n.command('models <id>')
    .description('the models the node itself lists')
    .action(
      action(async (id: string) => {
        const r = await api<{ models: { id: string }[] }>('GET', `/api/provider-nodes/${encodeURIComponent(id)}/models`);
        await printRows(r.models, [{ header: 'model', get: (x) => x.id }], r);
      }),
    );
  n.command('rm <id>')
    .description('delete a node')
    .action(
      action(async (id: string) => {
        await api('DELETE', `/api/provider-nodes/${encodeURIComponent(id)}`);
        process.stdout.write(`deleted ${id}\n`);
      }),
    );
  g.command('manifest')
    .description('the provider plugin manifest: every provider kind, its operations, auth and config fields (JSON)')
    .action(action(async () => printData(await api('GET', '/api/v1/provider-plugin-manifest'))));
}
