/**
 * `ctl gateway …`: the model gateway's providers, combos, keys, models, usage, a streaming chat, and
 * resilience (breakers, cool-downs), the response cache, budgets and token limits.
 * Over the control socket no key is needed (the socket is trusted); with --url pass --mgmt-key (or
 * CTL_GATEWAY_KEY; the older CTL_GATEWAY_API_KEY is still read) for inference and a management-scoped key
 * for the rest. The group's option is not called --api-key: `provider add` and `node add` have their own.
 */
import http from 'node:http';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { Option, type Command } from 'commander';
import { createParser } from 'eventsource-parser';
import { ApiError, errorMessage, request, socketPath, target, UnreachableError, type RequestSpec } from './client.js';
import { outputFormat, printData, printObject, printRows } from './output.js';
import { action, collect, intOption, UsageError } from './run.js';
import { registerMedia } from './gateway-media.js';
import { registerFilesAndBatches } from './gateway-batches.js';
import { registerWeb } from './gateway-web.js';
import { registerWebhooks } from './gateway-webhooks.js';
import { registerMemory } from './gateway-memory.js';
import { registerSkills } from './gateway-skills.js';
import { registerMcp } from './gateway-mcp.js';
import { registerA2a } from './gateway-a2a.js';
import { registerGuardrails } from './gateway-guardrails.js';
import { registerCompress } from './gateway-compress.js';
import { registerSettings } from './gateway-settings.js';
import { registerPolicies } from './gateway-policies.js';
import { registerProxies } from './gateway-proxies.js';
import { registerOAuth } from './gateway-oauth.js';
import { registerSync } from './gateway-sync.js';
import { registerAgentTasks } from './gateway-agent-tasks.js';
import { registerAssess } from './gateway-assess.js';
import { registerPlugins } from './gateway-plugins.js';
import { registerTunnels } from './gateway-tunnels.js';
import { registerLocalTools } from './gateway-local-tools.js';
import { registerNodes } from './gateway-nodes.js';
import { registerEvals } from './gateway-evals.js';
import { registerSystem } from './gateway-system.js';
import { registerRegisteredKeys } from './gateway-registered-keys.js';

const HOST = 'gateway';

let mgmtKey: string | undefined;

function authHeaders(): Record<string, string> {
  const key = mgmtKey ?? (process.env.CTL_GATEWAY_KEY || process.env.CTL_GATEWAY_API_KEY);
  return key ? { Authorization: `Bearer ${key}` } : {};
}

function gw<T = any>(method: string, path: string, body?: unknown, query?: RequestSpec['query']): Promise<T> {
  return request<T>({ host: HOST, method, path, body, query, headers: authHeaders() });
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8').trim();
}

const enc = encodeURIComponent;

// ----------------------------------------------------------------------------- providers

interface ProviderView {
  id: string;
  kind: string;
  name: string;
  baseUrl: string;
  enabled: boolean;
  accounts: { id: string; name: string; apiKey: string; enabled: boolean }[];
  models: { id: string; type: string }[];
  source: string;
}

function registerProviders(g: Command): void {
  const p = g.command('provider').description('provider connections (GET/POST /api/providers*)');

  p.command('list')
    .description('every provider connection (secrets masked)')
    .action(
      action(async () => {
        const res = await gw<{ providers: ProviderView[] }>('GET', '/api/providers');
        await printRows(
          res.providers,
          [
            { header: 'id', get: (r) => r.id },
            { header: 'kind', get: (r) => r.kind },
            { header: 'base url', get: (r) => r.baseUrl },
            { header: 'enabled', get: (r) => r.enabled },
            { header: 'accounts', get: (r) => r.accounts.length },
            { header: 'models', get: (r) => r.models.map((m) => m.id).join(',') },
            { header: 'source', get: (r) => r.source },
          ],
          res,
        );
      }),
    );

  p.command('get <id>')
    .description('one provider connection')
    .action(
      action(async (id: string) => {
        const v = await gw<ProviderView>('GET', `/api/providers/${enc(id)}`);
        await printObject(
          [
            ['id', v.id],
            ['kind', v.kind],
            ['name', v.name],
            ['base url', v.baseUrl],
            ['enabled', v.enabled],
            ['source', v.source],
            ['accounts', v.accounts.map((a) => `${a.name} ${a.apiKey}${a.enabled ? '' : ' (disabled)'}`).join('; ')],
            ['models', v.models.map((m) => (m.type === 'chat' ? m.id : `${m.id} (${m.type})`)).join(', ')],
          ],
          v,
        );
      }),
    );

  p.command('add <id>')
    .description('add a provider connection')
    .requiredOption('--kind <kind>', 'openai (any OpenAI-compatible URL), anthropic, gemini or ollama')
    .option('--base-url <url>', 'base URL up to the API version (default: the kind’s public endpoint)')
    .option('--api-key <key>', 'credential (prefer --api-key-stdin: command lines end up in shell history)')
    .option('--api-key-stdin', 'read the credential from standard input')
    .option('--model <id>', 'a model this provider serves (repeatable; `id:embedding` for embedding models)', collect, [])
    .option('--name <name>', 'display name')
    .option('--header <name=value>', 'extra upstream header (repeatable)', collect, [])
    .option('--disabled', 'add it disabled')
    .action(
      action(async (id: string, o: { kind: string; baseUrl?: string; apiKey?: string; apiKeyStdin?: boolean; model: string[]; name?: string; header: string[]; disabled?: boolean }) => {
        const body: Record<string, unknown> = { id, kind: o.kind };
        if (o.baseUrl) body.baseUrl = o.baseUrl;
        if (o.apiKey && o.apiKeyStdin) throw new UsageError('use either --api-key or --api-key-stdin');
        const key = o.apiKeyStdin ? await readStdin() : o.apiKey;
        if (key) body.apiKey = key;
        if (o.name) body.name = o.name;
        if (o.disabled) body.enabled = false;
        if (o.model.length) {
          body.models = o.model.map((m) => {
            const [mid, type] = m.split(/:(?=embedding$|image$|chat$)/);
            return type ? { id: mid, type } : m;
          });
        }
        if (o.header.length) {
          const headers: Record<string, string> = {};
          for (const h of o.header) {
            const i = h.indexOf('=');
            if (i <= 0) throw new UsageError(`--header wants name=value, got ${JSON.stringify(h)}`);
            headers[h.slice(0, i)] = h.slice(i + 1);
          }
          body.headers = headers;
        }
        const v = await gw<ProviderView>('POST', '/api/providers', body);
        if (outputFormat() !== 'table') return printData(v);
        process.stdout.write(`added provider ${v.id} (${v.kind}, ${v.baseUrl})\n`);
      }),
    );

  p.command('rm <id>')
    .alias('remove')
    .description('delete a provider connection (and its custom models)')
    .action(
      action(async (id: string) => {
        const r = await gw('DELETE', `/api/providers/${enc(id)}`);
        if (outputFormat() !== 'table') return printData(r);
        process.stdout.write(`deleted provider ${id}\n`);
      }),
    );

  p.command('test <id>')
    .description('check a connection: list its models, or send a one-token chat with --model')
    .option('--model <id>', 'upstream model id to send a one-token chat to')
    .option('--account <id-or-name>', 'which account to use (default: the first enabled)')
    .action(
      action(async (id: string, o: { model?: string; account?: string }) => {
        const r = await gw<{ ok: boolean; latencyMs: number; method: string; status?: number; error?: string; models?: number }>(
          'POST',
          `/api/providers/${enc(id)}/test`,
          { ...(o.model ? { model: o.model } : {}), ...(o.account ? { account: o.account } : {}) },
        );
        if (outputFormat() !== 'table') await printData(r);
        else if (r.ok) process.stdout.write(`ok: ${id} answered in ${r.latencyMs} ms${r.models !== undefined ? ` (${r.models} models)` : ''}\n`);
        else process.stdout.write(`failed: ${id}${r.status ? ` ${r.status}` : ''}: ${r.error}\n`);
        if (!r.ok) process.exitCode = 1;
      }),
    );

  p.command('import <file>')
    .description('import providers from a JSON (array or {providers: […]}) or CSV file; prints per-row results')
    .option('--upsert', 'update providers that already exist instead of failing those rows')
    .action(
      action(async (file: string, o: { upsert?: boolean }) => {
        const text = file === '-' ? await readStdin() : readFileSync(file, 'utf8');
        const csv = /\.csv$/i.test(file) || (!text.trimStart().startsWith('[') && !text.trimStart().startsWith('{'));
        const r = await request<{ total: number; created: number; updated: number; failed: number; results: { row: number; id?: string; status: string; error?: string }[] }>({
          host: HOST,
          method: 'POST',
          path: '/api/providers/import',
          query: { upsert: o.upsert ? 'true' : undefined },
          raw: { data: text, contentType: csv ? 'text/csv' : 'application/json' },
          headers: authHeaders(),
        });
        if (outputFormat() !== 'table') await printData(r);
        else {
          await printRows(r.results, [
            { header: 'row', get: (x) => x.row },
            { header: 'id', get: (x) => x.id ?? '' },
            { header: 'status', get: (x) => x.status },
            { header: 'error', get: (x) => x.error ?? '' },
          ]);
          process.stdout.write(`${r.created} created, ${r.updated} updated, ${r.failed} failed\n`);
        }
        if (r.failed > 0) process.exitCode = 1;
      }),
    );
}

// ----------------------------------------------------------------------------- combos

interface ComboView {
  id: string;
  name: string;
  strategy: string;
  targets: { model: string; weight?: number }[];
  enabled: boolean;
  source: string;
  description?: string;
}

function targetList(t: ComboView['targets']): string {
  return t.map((x) => (x.weight !== undefined ? `${x.model}*${x.weight}` : x.model)).join(', ');
}

function parseTargets(list: string[]): { model: string; weight?: number }[] {
  return list.map((t) => {
    const m = /^(.+)\*(\d+(?:\.\d+)?)$/.exec(t);
    return m ? { model: m[1]!, weight: Number(m[2]) } : { model: t };
  });
}

function registerCombos(g: Command): void {
  const c = g.command('combo').description('combos: one model id over several targets with a strategy (/api/combos*)');
  const STRATEGY_HELP = 'priority, weighted, round-robin, random, least-used, cost-optimized or latency';

  c.command('list')
    .description('every combo')
    .action(
      action(async () => {
        const r = await gw<{ combos: ComboView[] }>('GET', '/api/combos');
        await printRows(
          r.combos,
          [
            { header: 'name', get: (x) => x.name },
            { header: 'strategy', get: (x) => x.strategy },
            { header: 'targets', get: (x) => targetList(x.targets) },
            { header: 'enabled', get: (x) => x.enabled },
            { header: 'source', get: (x) => x.source },
          ],
          r,
        );
      }),
    );

  c.command('get <name>')
    .description('one combo')
    .action(
      action(async (name: string) => {
        const x = await gw<ComboView>('GET', `/api/combos/${enc(name)}`);
        await printObject(
          [
            ['name', x.name],
            ['id', x.id],
            ['strategy', x.strategy],
            ['targets', targetList(x.targets)],
            ['enabled', x.enabled],
            ['source', x.source],
          ],
          x,
        );
      }),
    );

  c.command('add <name>')
    .description('create a combo; targets are <provider>/<model> or aliases, `model*3` gives a weight')
    .requiredOption('--target <model>', 'a target, in order (repeatable)', collect, [])
    .option('--strategy <name>', STRATEGY_HELP, 'priority')
    .option('--description <text>', 'free text')
    .option('--max-attempts <n>', 'upstream attempts at most per request', intOption('--max-attempts'))
    .action(
      action(async (name: string, o: { target: string[]; strategy: string; description?: string; maxAttempts?: number }) => {
        if (o.target.length === 0) throw new UsageError('give at least one --target');
        const x = await gw<ComboView>('POST', '/api/combos', {
          name,
          strategy: o.strategy,
          targets: parseTargets(o.target),
          ...(o.description ? { description: o.description } : {}),
          ...(o.maxAttempts ? { maxAttempts: o.maxAttempts } : {}),
        });
        if (outputFormat() !== 'table') return printData(x);
        process.stdout.write(`added combo ${x.name} (${x.strategy}: ${targetList(x.targets)})\n`);
      }),
    );

  c.command('set <name>')
    .description('change a combo’s strategy, targets or state')
    .option('--target <model>', 'replace the targets (repeatable)', collect, [])
    .option('--strategy <name>', STRATEGY_HELP)
    .option('--enable', 'enable it')
    .option('--disable', 'disable it')
    .action(
      action(async (name: string, o: { target: string[]; strategy?: string; enable?: boolean; disable?: boolean }) => {
        const body: Record<string, unknown> = {};
        if (o.target.length) body.targets = parseTargets(o.target);
        if (o.strategy) body.strategy = o.strategy;
        if (o.enable && o.disable) throw new UsageError('use either --enable or --disable');
        if (o.enable) body.enabled = true;
        if (o.disable) body.enabled = false;
        if (Object.keys(body).length === 0) throw new UsageError('nothing to change');
        const x = await gw<ComboView>('PATCH', `/api/combos/${enc(name)}`, body);
        if (outputFormat() !== 'table') return printData(x);
        process.stdout.write(`updated combo ${x.name} (${x.strategy}: ${targetList(x.targets)})\n`);
      }),
    );

  c.command('rm <name>')
    .alias('remove')
    .description('delete a combo (and its model mappings)')
    .action(
      action(async (name: string) => {
        const r = await gw('DELETE', `/api/combos/${enc(name)}`);
        if (outputFormat() !== 'table') return printData(r);
        process.stdout.write(`deleted combo ${name}\n`);
      }),
    );

  c.command('metrics [name]')
    .description('per-target requests, success rate and latency of each combo')
    .action(
      action(async (name?: string) => {
        const r = await gw<{ combos: { name: string; strategy?: string; targets: Record<string, any>[] }[] }>('GET', '/api/combos/metrics', undefined, { combo: name });
        const rows: Record<string, any>[] = r.combos.flatMap((x) => x.targets.map((t) => ({ combo: x.name, ...t })));
        await printRows(
          rows,
          [
            { header: 'combo', get: (x) => x.combo },
            { header: 'target', get: (x) => x.model },
            { header: 'requests', get: (x) => x.requests },
            { header: 'success', get: (x) => (x.successRate === null ? '' : `${Math.round(x.successRate * 100)}%`) },
            { header: 'avg ms', get: (x) => x.avgLatencyMs ?? '' },
            { header: 'p95 ms', get: (x) => x.p95LatencyMs ?? '' },
          ],
          r,
        );
      }),
    );
}

// ----------------------------------------------------------------------------- keys

interface KeyView {
  id: string;
  name: string;
  prefix: string;
  models: string[];
  scopes: string[];
  status: string;
  source: string;
  createdAt: string;
  lastUsedAt?: string;
  expiresAt?: string;
  key?: string;
}

function registerKeys(g: Command): void {
  const k = g.command('key').description('gateway API keys (/api/keys*); the raw key is shown once, at creation');

  k.command('create <name>')
    .description('create a key and print it (store it: it is not shown again)')
    .option('--model <pattern>', 'allowed model id or glob, e.g. local/* (repeatable; default *)', collect, [])
    .option('--scope <scope>', 'inference (default), management, mcp or admin (repeatable)', collect, [])
    .option('--expires <time>', 'expiry, ISO 8601')
    .action(
      action(async (name: string, o: { model: string[]; scope: string[]; expires?: string }) => {
        const v = await gw<KeyView>('POST', '/api/keys', {
          name,
          ...(o.model.length ? { models: o.model } : {}),
          ...(o.scope.length ? { scopes: o.scope } : {}),
          ...(o.expires ? { expiresAt: o.expires } : {}),
        });
        if (outputFormat() !== 'table') return printData(v);
        process.stdout.write(`${v.key}\n`);
        process.stderr.write(`created key ${v.name} (${v.id}); store it now: it is not shown again\n`);
      }),
    );

  k.command('list')
    .description('every key (never the raw key)')
    .action(
      action(async () => {
        const r = await gw<{ keys: KeyView[] }>('GET', '/api/keys');
        await printRows(
          r.keys,
          [
            { header: 'id', get: (x) => x.id },
            { header: 'name', get: (x) => x.name },
            { header: 'prefix', get: (x) => x.prefix },
            { header: 'models', get: (x) => x.models.join(',') },
            { header: 'scopes', get: (x) => x.scopes.join(',') },
            { header: 'status', get: (x) => x.status },
            { header: 'last used', get: (x) => x.lastUsedAt ?? '' },
            { header: 'source', get: (x) => x.source },
          ],
          r,
        );
      }),
    );

  k.command('revoke <id>')
    .description('revoke a key (by id or name); it stops working at once')
    .action(
      action(async (id: string) => {
        const v = await gw<KeyView>('POST', `/api/keys/${enc(id)}/revoke`);
        if (outputFormat() !== 'table') return printData(v);
        process.stdout.write(`revoked key ${v.name} (${v.id})\n`);
      }),
    );
}

// ----------------------------------------------------------------------------- models, usage

function registerModels(g: Command): void {
  g.command('models')
    .description('models clients can use: <provider>/<model>, combos and no-thinking variants (GET /v1/models)')
    .action(
      action(async () => {
        const r = await gw<{ data: { id: string; owned_by: string; type?: string }[] }>('GET', '/v1/models');
        await printRows(
          r.data,
          [
            { header: 'id', get: (x) => x.id },
            { header: 'type', get: (x) => x.type ?? 'chat' },
            { header: 'owner', get: (x) => x.owned_by },
          ],
          r,
        );
      }),
    );
}

function registerUsage(g: Command): void {
  g.command('usage')
    .description('usage and cost per day (or hour), or the recent request log with --logs')
    .option('--days <n>', 'days back (default 7)', intOption('--days'))
    .option('--hourly', 'one row per hour instead of per day')
    .option('--group-by <field>', 'provider, model, combo or key')
    .option('--logs', 'recent requests, one line each')
    .option('--limit <n>', 'with --logs: how many (default 50)', intOption('--limit'))
    .action(
      action(async (o: { days?: number; hourly?: boolean; groupBy?: string; logs?: boolean; limit?: number }) => {
        if (o.logs) {
          if (outputFormat() !== 'table') return printData(await gw('GET', '/api/usage/request-logs', undefined, { limit: o.limit ?? 50 }));
          const r = await gw<{ logs: string[] }>('GET', '/api/usage/logs', undefined, { limit: o.limit ?? 50 });
          process.stdout.write(r.logs.length ? r.logs.join('\n') + '\n' : 'no requests yet\n');
          return;
        }
        const r = await gw<{ totals: Record<string, number>; history: Record<string, any>[] }>('GET', '/api/usage/history', undefined, {
          days: o.days,
          period: o.hourly ? 'hour' : undefined,
          groupBy: o.groupBy,
        });
        if (outputFormat() !== 'table') return printData(r);
        await printRows(r.history, [
          { header: o.hourly ? 'hour' : 'day', get: (x) => x.period },
          ...(o.groupBy ? [{ header: o.groupBy, get: (x: Record<string, any>) => x.group || '-' }] : []),
          { header: 'requests', get: (x) => x.requests },
          { header: 'errors', get: (x) => x.errors },
          { header: 'tokens in', get: (x) => x.tokensIn },
          { header: 'tokens out', get: (x) => x.tokensOut },
          { header: 'cost usd', get: (x) => Number(x.cost).toFixed(6) },
          { header: 'avg ms', get: (x) => x.avgLatencyMs },
        ]);
        const t = r.totals;
        process.stdout.write(`total: ${t.requests} requests, ${t.errors} errors, ${t.tokensIn} in / ${t.tokensOut} out tokens, $${Number(t.cost).toFixed(6)}\n`);
      }),
    );
}

// ----------------------------------------------------------------------------- chat

interface ChatOpts {
  system?: string;
  maxTokens?: number;
  temperature?: string;
  stream: boolean;
}

/** POST a streaming request and feed the body to `onData` as it arrives; resolves with the status. */
function streamRequest(path: string, body: unknown, onData: (text: string) => void): Promise<{ status: number; text: string }> {
  const payload = JSON.stringify(body);
  const headers: Record<string, string | number> = {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(payload),
    Accept: 'text/event-stream',
    ...authHeaders(),
  };
  const t = target();
  return new Promise((resolve, reject) => {
    const onResponse = (res: http.IncomingMessage) => {
      res.setEncoding('utf8');
      let errText = '';
      const ok = (res.statusCode ?? 0) < 400;
      res.on('data', (c: string) => (ok ? onData(c) : (errText += c)));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: errText }));
      res.on('error', reject);
    };
    let req: http.ClientRequest;
    if (/^https?:\/\//.test(t)) {
      const url = new URL(path.replace(/^\//, ''), t.endsWith('/') ? t : t + '/');
      req = (url.protocol === 'https:' ? https : http).request(url, { method: 'POST', headers, rejectUnauthorized: process.env.CTL_INSECURE !== '1' }, onResponse);
    } else {
      req = http.request({ socketPath: socketPath(), path, method: 'POST', headers: { ...headers, Host: HOST } }, onResponse);
    }
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (['ENOENT', 'ECONNREFUSED', 'ECONNRESET', 'EACCES', 'ENOTSOCK'].includes(e.code ?? '')) {
        reject(new UnreachableError(`cannot reach the ctl daemon at ${t}: ${e.code} (is \`ctl serve\` running?)`));
      } else reject(e);
    });
    req.end(payload);
  });
}

function registerChat(g: Command): void {
  g.command('chat <model> <prompt>')
    .description('send one prompt to any model id the gateway resolves and stream the answer to the terminal')
    .option('--system <text>', 'system prompt')
    .option('--max-tokens <n>', 'answer length limit', intOption('--max-tokens'))
    .option('--temperature <t>', 'sampling temperature')
    .option('--no-stream', 'wait for the whole answer')
    .action(
      action(async (model: string, prompt: string, o: ChatOpts) => {
        const body: Record<string, unknown> = {
          model,
          messages: [...(o.system ? [{ role: 'system', content: o.system }] : []), { role: 'user', content: prompt === '-' ? await readStdin() : prompt }],
        };
        if (o.maxTokens !== undefined) body.max_tokens = o.maxTokens;
        if (o.temperature !== undefined) {
          const t = Number(o.temperature);
          if (!Number.isFinite(t)) throw new UsageError('--temperature must be a number');
          body.temperature = t;
        }
        if (!o.stream || outputFormat() !== 'table') {
          const r = await gw<any>('POST', '/v1/chat/completions', body);
          if (outputFormat() !== 'table') return printData(r);
          process.stdout.write(`${r.choices?.[0]?.message?.content ?? ''}\n`);
          return;
        }
        body.stream = true;
        body.stream_options = { include_usage: true };
        let usage: { prompt_tokens: number; completion_tokens: number } | undefined;
        let endedWithNewline = true;
        let streamErr: string | undefined;
        const parser = createParser({
          onEvent(ev) {
            if (ev.data === '[DONE]') return;
            let chunk: any;
            try {
              chunk = JSON.parse(ev.data);
            } catch {
              return;
            }
            if (chunk.error) {
              streamErr = chunk.error.message ?? 'stream failed';
              return;
            }
            const delta = chunk.choices?.[0]?.delta?.content;
            if (typeof delta === 'string' && delta) {
              process.stdout.write(delta);
              endedWithNewline = delta.endsWith('\n');
            }
            if (chunk.usage) usage = chunk.usage;
          },
        });
        const res = await streamRequest('/v1/chat/completions', body, (text) => parser.feed(text));
        if (res.status >= 400) {
          let data: unknown = res.text;
          try {
            data = JSON.parse(res.text);
          } catch {
            /* text */
          }
          throw new ApiError(res.status, errorMessage(data, res.status), data);
        }
        if (!endedWithNewline) process.stdout.write('\n');
        if (streamErr) throw new ApiError(502, streamErr, undefined);
        if (usage && process.stderr.isTTY) process.stderr.write(`[${usage.prompt_tokens} in, ${usage.completion_tokens} out]\n`);
      }),
    );
}

// ----------------------------------------------------------------------------- resilience

const ms = (n: number | undefined) => (n === undefined ? '' : n >= 1000 ? `${Math.ceil(n / 1000)}s` : `${n}ms`);

interface BreakerRow {
  provider: string;
  profile: string;
  state: string;
  failures: number;
  degradationThreshold: number;
  failureThreshold: number;
  openCycles: number;
  resetTimeoutMs: number;
  retryAfterMs?: number;
  lastError?: string;
}

function printBreakers(rows: BreakerRow[], raw: unknown): Promise<void> {
  return printRows(
    rows,
    [
      { header: 'provider', get: (b) => b.provider },
      { header: 'type', get: (b) => b.profile },
      { header: 'state', get: (b) => b.state },
      { header: 'failures', get: (b) => `${b.failures} (degraded ${b.degradationThreshold}, open ${b.failureThreshold})` },
      { header: 'cycles', get: (b) => b.openCycles },
      { header: 'reset', get: (b) => ms(b.resetTimeoutMs) },
      { header: 'retry in', get: (b) => ms(b.retryAfterMs) },
      { header: 'last error', get: (b) => (b.lastError ?? '').slice(0, 60) },
    ],
    raw,
  );
}

function registerResilience(g: Command): void {
  const r = g
    .command('resilience')
    .description('provider circuit breakers and resilience settings (GET /api/resilience); `reset` closes breakers')
    .action(
      action(async () => {
        const v = await gw<{ breakers: BreakerRow[]; accounts: { strategy: string; sessionAffinity: boolean }; modelLockout: { enabled: boolean } }>('GET', '/api/resilience');
        if (outputFormat() !== 'table') return printData(v);
        await printBreakers(v.breakers, v);
        process.stdout.write(
          `accounts: ${v.accounts.strategy}, session affinity ${v.accounts.sessionAffinity ? 'on' : 'off'}; model lock-out ${v.modelLockout.enabled ? 'on' : 'off'} (settings: ctl gateway resilience -o yaml)\n`,
        );
      }),
    );

  r.command('reset')
    .description('reset circuit breakers (POST /api/resilience/reset); --all also clears cool-downs and lock-outs')
    .option('--provider <id>', 'only this provider')
    .option('--all', 'also clear account cool-downs and model lock-outs')
    .action(
      action(async (o: { provider?: string; all?: boolean }) => {
        const v = await gw<{ breakersReset: number; cooldownsCleared?: number; lockoutsCleared?: number; breakers: BreakerRow[] }>('POST', '/api/resilience/reset', {
          ...(o.provider ? { provider: o.provider } : {}),
          ...(o.all ? { cooldowns: true, lockouts: true } : {}),
        });
        if (outputFormat() !== 'table') return printData(v);
        const extra = o.all ? `, ${v.cooldownsCleared ?? 0} cool-down(s) and ${v.lockoutsCleared ?? 0} lock-out(s) cleared` : '';
        process.stdout.write(`reset ${v.breakersReset} breaker(s)${o.provider ? ` of ${o.provider}` : ''}${extra}\n`);
      }),
    );
}

interface CooldownRow {
  provider: string;
  account: string;
  rateLimitedUntil: string;
  remainingMs: number;
  backoffLevel: number;
  reason: string;
  lastError?: string;
}

interface LockoutRow {
  provider: string;
  account: string;
  model: string;
  until: string;
  remainingMs: number;
  failures: number;
  reason: string;
}

function registerCooldowns(g: Command): void {
  const c = g
    .command('cooldowns')
    .description('account cool-downs (GET /api/rate-limits) and model lock-outs (GET /api/resilience/model-cooldowns); `clear` clears them')
    .action(
      action(async () => {
        const [limits, locks] = await Promise.all([
          gw<{ cooldowns: CooldownRow[] }>('GET', '/api/rate-limits'),
          gw<{ cooldowns: LockoutRow[] }>('GET', '/api/resilience/model-cooldowns'),
        ]);
        if (outputFormat() !== 'table') return printData({ accounts: limits.cooldowns, models: locks.cooldowns });
        const rows = [
          ...limits.cooldowns.map((x) => ({ kind: 'account', provider: x.provider, account: x.account, model: '*', left: x.remainingMs, until: x.rateLimitedUntil, why: `${x.reason}${x.backoffLevel ? ` (level ${x.backoffLevel})` : ''}` })),
          ...locks.cooldowns.map((x) => ({ kind: 'model', provider: x.provider, account: x.account, model: x.model, left: x.remainingMs, until: x.until, why: x.reason })),
        ].sort((a, b) => a.left - b.left);
        if (rows.length === 0) {
          process.stdout.write('no account is cooling down and no model is locked out\n');
          return;
        }
        await printRows(rows, [
          { header: 'kind', get: (x) => x.kind },
          { header: 'provider', get: (x) => x.provider },
          { header: 'account', get: (x) => x.account },
          { header: 'model', get: (x) => x.model },
          { header: 'left', get: (x) => ms(x.left) },
          { header: 'until', get: (x) => x.until },
          { header: 'reason', get: (x) => x.why.slice(0, 70) },
        ]);
      }),
    );

  c.command('clear')
    .description('clear model lock-outs and account cool-downs (all, one provider, or one provider model)')
    .option('--provider <id>', 'only this provider')
    .option('--model <id>', 'only this model of --provider (model lock-outs)')
    .action(
      action(async (o: { provider?: string; model?: string }) => {
        if (o.model && !o.provider) throw new UsageError('--model needs --provider');
        if (o.model) {
          const v = await gw<{ cleared: number }>('DELETE', '/api/resilience/model-cooldowns', { provider: o.provider, model: o.model });
          if (outputFormat() !== 'table') return printData(v);
          process.stdout.write(`cleared ${v.cleared} lock-out(s) of ${o.provider}/${o.model}\n`);
          return;
        }
        const v = await gw<{ cooldownsCleared: number; lockoutsCleared: number }>('POST', '/api/resilience/reset', {
          ...(o.provider ? { provider: o.provider } : {}),
          breakers: false,
          cooldowns: true,
          lockouts: true,
        });
        if (outputFormat() !== 'table') return printData(v);
        process.stdout.write(`cleared ${v.cooldownsCleared} account cool-down(s) and ${v.lockoutsCleared} model lock-out(s)${o.provider ? ` of ${o.provider}` : ''}\n`);
      }),
    );
}

// ----------------------------------------------------------------------------- cache

function registerCache(g: Command): void {
  const c = g.command('cache').description('the response cache and idempotency keys (/api/cache*)');

  c.command('stats')
    .description('cache sizes, hit rate and idempotency keys (GET /api/cache/stats)')
    .action(
      action(async () => {
        const v = await gw<{ semanticCache: Record<string, any>; idempotency: { activeKeys: number; windowMs: number } }>('GET', '/api/cache/stats');
        const sc = v.semanticCache;
        await printObject(
          [
            ['enabled', `${sc.enabled} (${sc.mode})`],
            ['memory', `${sc.memorySize} / ${sc.memoryMaxSize} entries`],
            ['database', `${sc.dbSize} entries`],
            ['hit rate', `${(sc.hitRate * 100).toFixed(1)}% (${sc.hits} hits, ${sc.misses} misses)`],
            ['ttl', ms(sc.ttlMs)],
            ['idempotency', `${v.idempotency.activeKeys} active key(s), ${v.idempotency.windowMs} ms window`],
          ],
          v,
        );
      }),
    );

  c.command('clear')
    .description('empty the cache (DELETE /api/cache/stats), or only matching entries (DELETE /api/cache/entries)')
    .option('--model <id>', 'only entries of this model id')
    .option('--older-than <age>', 'only entries older than this (30m, 2h, 7d)')
    .action(
      action(async (o: { model?: string; olderThan?: string }) => {
        if (!o.model && !o.olderThan) {
          const v = await gw<{ cleared: number }>('DELETE', '/api/cache/stats');
          if (outputFormat() !== 'table') return printData(v);
          process.stdout.write(`cleared ${v.cleared} cache entr${v.cleared === 1 ? 'y' : 'ies'}\n`);
          return;
        }
        const v = await gw<{ deleted: number }>('DELETE', '/api/cache/entries', { ...(o.model ? { model: o.model } : {}), ...(o.olderThan ? { olderThan: o.olderThan } : {}) });
        if (outputFormat() !== 'table') return printData(v);
        process.stdout.write(`deleted ${v.deleted} cache entr${v.deleted === 1 ? 'y' : 'ies'}\n`);
      }),
    );

  c.command('reasoning')
    .description('reasoning kept from tool-calling answers for the next turn (GET /api/cache/reasoning); --clear deletes')
    .option('--provider <id>', 'only this provider\'s entries')
    .option('--tool-call-id <id>', 'only this tool call\'s entry')
    .option('--clear', 'delete the matching entries (all without a filter)')
    .action(
      action(async (o: { provider?: string; toolCallId?: string; clear?: boolean }) => {
        const q = `${o.provider || o.toolCallId ? '?' : ''}${new URLSearchParams({ ...(o.provider ? { provider: o.provider } : {}), ...(o.toolCallId ? { toolCallId: o.toolCallId } : {}) }).toString()}`;
        if (o.clear) {
          const v = await gw<{ deleted: number }>('DELETE', `/api/cache/reasoning${q}`);
          if (outputFormat() !== 'table') return printData(v);
          process.stdout.write(`deleted ${v.deleted} entr${v.deleted === 1 ? 'y' : 'ies'}\n`);
          return;
        }
        const v = await gw<{ entries: { toolCallId: string; provider: string; model: string; reasoningChars: number; hasSignature: boolean; hits: number; createdAt: string }[] }>('GET', `/api/cache/reasoning${q}`);
        await printRows(
          v.entries,
          [
            { header: 'tool call', get: (x) => x.toolCallId },
            { header: 'provider', get: (x) => x.provider },
            { header: 'model', get: (x) => x.model },
            { header: 'chars', get: (x) => x.reasoningChars },
            { header: 'signature', get: (x) => x.hasSignature },
            { header: 'hits', get: (x) => x.hits },
            { header: 'created', get: (x) => x.createdAt },
          ],
          v,
        );
      }),
    );
}

// ----------------------------------------------------------------------------- budgets and token limits

/** A key given by id or by name. */
async function keyId(ref: string): Promise<string> {
  const r = await gw<{ keys: { id: string; name: string }[] }>('GET', '/api/keys');
  const k = r.keys.find((x) => x.id === ref) ?? r.keys.find((x) => x.name === ref);
  if (!k) throw new ApiError(404, `API key ${JSON.stringify(ref)} not found (ctl gateway key list)`, undefined);
  return k.id;
}

function usd(v: string, name: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new UsageError(`${name} must be a non-negative number of USD`);
  return n;
}

interface BudgetView {
  apiKeyId: string;
  warningThreshold: number;
  resetTime: string;
  periods: Record<string, { limitUsd: number; spentUsd: number; remainingUsd: number; nextResetAt: string; warning: boolean; exceeded: boolean }>;
}

function printBudgets(list: BudgetView[], raw: unknown): Promise<void> {
  const rows = list.flatMap((b) => Object.entries(b.periods).map(([period, p]) => ({ key: b.apiKeyId, period, ...p })));
  return printRows(
    rows,
    [
      { header: 'key', get: (x) => x.key },
      { header: 'period', get: (x) => x.period },
      { header: 'limit usd', get: (x) => x.limitUsd },
      { header: 'spent usd', get: (x) => x.spentUsd.toFixed(6) },
      { header: 'left usd', get: (x) => x.remainingUsd.toFixed(6) },
      { header: 'resets', get: (x) => x.nextResetAt },
      { header: 'state', get: (x) => (x.exceeded ? 'EXCEEDED' : x.warning ? 'warning' : 'ok') },
    ],
    raw,
  );
}

function registerBudget(g: Command): void {
  const b = g.command('budget').description('USD budgets per API key (/api/usage/budget)');

  b.command('get [key]')
    .description('budgets with spend per window (all keys, or one key by id or name)')
    .action(
      action(async (key?: string) => {
        if (key) {
          const v = await gw<BudgetView>('GET', '/api/usage/budget', undefined, { apiKeyId: await keyId(key) });
          return printBudgets([v], v);
        }
        const r = await gw<{ budgets: BudgetView[] }>('GET', '/api/usage/budget');
        if (r.budgets.length === 0 && outputFormat() === 'table') {
          process.stdout.write('no budgets\n');
          return;
        }
        await printBudgets(r.budgets, r);
      }),
    );

  b.command('set <key>')
    .description('set the budget of an API key (by id or name); at least one limit must be above 0')
    .option('--daily <usd>', 'daily limit in USD')
    .option('--weekly <usd>', 'weekly limit in USD (weeks start on Monday)')
    .option('--monthly <usd>', 'monthly limit in USD')
    .option('--warning <fraction>', 'warning threshold, 0 to 1 (default 0.8)')
    .option('--interval <interval>', 'main period shown: daily, weekly or monthly')
    .option('--reset-time <HH:MM>', 'time of day (UTC) the windows start (default 00:00)')
    .action(
      action(async (key: string, o: { daily?: string; weekly?: string; monthly?: string; warning?: string; interval?: string; resetTime?: string }) => {
        if (o.daily === undefined && o.weekly === undefined && o.monthly === undefined) throw new UsageError('give at least one of --daily, --weekly, --monthly');
        const body: Record<string, unknown> = { apiKeyId: await keyId(key) };
        if (o.daily !== undefined) body.dailyLimitUsd = usd(o.daily, '--daily');
        if (o.weekly !== undefined) body.weeklyLimitUsd = usd(o.weekly, '--weekly');
        if (o.monthly !== undefined) body.monthlyLimitUsd = usd(o.monthly, '--monthly');
        if (o.warning !== undefined) {
          const w = Number(o.warning);
          if (!Number.isFinite(w)) throw new UsageError('--warning must be a number between 0 and 1');
          body.warningThreshold = w;
        }
        if (o.interval !== undefined) body.resetInterval = o.interval;
        if (o.resetTime !== undefined) body.resetTime = o.resetTime;
        const v = await gw<BudgetView>('POST', '/api/usage/budget', body);
        if (outputFormat() !== 'table') return printData(v);
        await printBudgets([v], v);
      }),
    );
}

interface LimitView {
  id: string;
  apiKeyId: string;
  scopeType: string;
  scopeValue?: string;
  tokenLimit: number;
  tokensUsed: number;
  remaining: number;
  resetInterval: string;
  nextResetAt: string;
  enabled: boolean;
}

const limitColumns = [
  { header: 'id', get: (x: LimitView) => x.id },
  { header: 'key', get: (x: LimitView) => x.apiKeyId },
  { header: 'scope', get: (x: LimitView) => (x.scopeType === 'global' ? 'global' : `${x.scopeType} ${x.scopeValue}`) },
  { header: 'limit', get: (x: LimitView) => x.tokenLimit },
  { header: 'used', get: (x: LimitView) => x.tokensUsed },
  { header: 'left', get: (x: LimitView) => x.remaining },
  { header: 'window', get: (x: LimitView) => x.resetInterval },
  { header: 'resets', get: (x: LimitView) => x.nextResetAt },
  { header: 'enabled', get: (x: LimitView) => x.enabled },
];

function registerLimits(g: Command): void {
  const l = g.command('limits').description('token limits per API key (/api/usage/token-limits)');

  l.command('list')
    .description('token limits with the tokens used in their current window')
    .option('--key <key>', 'only this API key (id or name)')
    .action(
      action(async (o: { key?: string }) => {
        const r = await gw<{ limits: LimitView[] }>('GET', '/api/usage/token-limits', undefined, o.key ? { apiKeyId: await keyId(o.key) } : undefined);
        if (r.limits.length === 0 && outputFormat() === 'table') {
          process.stdout.write('no token limits\n');
          return;
        }
        await printRows(r.limits, limitColumns, r);
      }),
    );

  l.command('set')
    .description('create a token limit, or update one with --id')
    .requiredOption('--key <key>', 'API key (id or name)')
    .addOption(new Option('--scope <scope>', 'model, provider or global').choices(['model', 'provider', 'global']).makeOptionMandatory())
    .option('--value <id>', 'the model id or provider id the limit applies to (not for global)')
    .requiredOption('--tokens <n>', 'tokens (input + output) allowed per window', intOption('--tokens'))
    .option('--interval <interval>', 'daily, weekly or monthly (default monthly)')
    .option('--reset-time <HH:MM>', 'time of day (UTC) the window starts (default 00:00)')
    .option('--id <id>', 'update this limit instead of creating one')
    .option('--disabled', 'keep the limit but do not enforce it')
    .action(
      action(async (o: { key: string; scope: string; value?: string; tokens: number; interval?: string; resetTime?: string; id?: string; disabled?: boolean }) => {
        if (o.scope !== 'global' && !o.value) throw new UsageError(`--scope ${o.scope} needs --value (the ${o.scope === 'provider' ? 'provider' : 'model'} id)`);
        const v = await gw<LimitView>('POST', '/api/usage/token-limits', {
          ...(o.id ? { id: o.id } : {}),
          apiKeyId: await keyId(o.key),
          scopeType: o.scope,
          ...(o.value && o.scope !== 'global' ? { scopeValue: o.value } : {}),
          tokenLimit: o.tokens,
          ...(o.interval ? { resetInterval: o.interval } : {}),
          ...(o.resetTime ? { resetTime: o.resetTime } : {}),
          enabled: !o.disabled,
        });
        if (outputFormat() !== 'table') return printData(v);
        await printRows([v], limitColumns);
      }),
    );

  l.command('rm <id>')
    .alias('remove')
    .description('delete a token limit')
    .action(
      action(async (id: string) => {
        const v = await gw('DELETE', '/api/usage/token-limits', undefined, { id });
        if (outputFormat() !== 'table') return printData(v);
        process.stdout.write(`deleted token limit ${id}\n`);
      }),
    );
}

export function register(program: Command): void {
  const g = program
    .command('gateway')
    .description('the model gateway: providers, combos, keys, models, usage, chat, image, speak, transcribe, resilience, cache, budgets and limits (DIR/gateway.yaml; SIGHUP reloads it)')
    .option('--mgmt-key <key>', 'gateway API key sent with every request to a --url listener (default $CTL_GATEWAY_KEY, else $CTL_GATEWAY_API_KEY; not needed on the socket)');
  g.hook('preAction', (thisCommand) => {
    mgmtKey = thisCommand.opts<{ mgmtKey?: string }>().mgmtKey;
  });
  registerProviders(g);
  registerCombos(g);
  registerKeys(g);
  registerModels(g);
  registerUsage(g);
  registerChat(g);
  registerMedia(g, authHeaders);
  registerFilesAndBatches(g, authHeaders);
  registerWeb(g, authHeaders);
  registerWebhooks(g, authHeaders);
  registerMemory(g, authHeaders);
  registerSkills(g, authHeaders);
  registerMcp(g, authHeaders);
  registerA2a(g, authHeaders);
  registerGuardrails(g, authHeaders);
  registerCompress(g, authHeaders);
  registerSettings(g, authHeaders);
  registerPolicies(g, authHeaders);
  registerProxies(g, authHeaders);
  registerOAuth(g, authHeaders);
  registerSync(g, authHeaders);
  registerAgentTasks(g, authHeaders);
  registerAssess(g, authHeaders);
  registerPlugins(g, authHeaders);
  registerTunnels(g, authHeaders);
  registerLocalTools(g, authHeaders);
  registerNodes(g, authHeaders);
  registerEvals(g, authHeaders);
  registerSystem(g, authHeaders);
  registerRegisteredKeys(g, authHeaders);
  registerResilience(g);
  registerCooldowns(g);
  registerCache(g);
  registerBudget(g);
  registerLimits(g);
}
