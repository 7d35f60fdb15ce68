/** `ctl gateway skill …` (/api/skills*) and `ctl gateway agent-skill …` (/api/agent-skills*). */
import { Option, type Command } from 'commander';
import { readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { request } from './client.js';
import { outputFormat, printData, printObject, printRows } from './output.js';
import { action, intOption, numberOption, UsageError } from './run.js';

interface SkillView {
  id: string;
  name: string;
  version: string;
  description: string;
  mode: string;
  source: string;
  apiKeyId: string | null;
  handlerBytes?: number;
  handlerCode?: string;
  schema: unknown;
  updatedAt: string;
}

interface ExecutionView {
  id: string;
  skillName: string;
  status: string;
  success: boolean;
  output: unknown;
  error: string | null;
  durationMs: number;
  apiKeyId: string | null;
  createdAt: string;
}

interface AgentSkillView {
  id: string;
  name: string;
  description: string;
  prompt: string;
  model: string | null;
  temperature: number | null;
  updatedAt: string;
}

const enc = encodeURIComponent;
const MODES = ['on', 'off', 'auto'];

/** A manifest from a local file, or a folder holding skill.json. */
function readManifest(path: string): unknown {
  let file = resolve(path);
  try {
    if (statSync(file).isDirectory()) file = join(file, 'skill.json');
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new UsageError(`cannot read a skill manifest from ${file}: ${(e as Error).message}`);
  }
}

function jsonArg(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`${what} is not JSON`);
  }
}

export function registerSkills(g: Command, auth: () => Record<string, string>): void {
  const api = <T>(method: string, path: string, body?: unknown, query?: Record<string, string | number | undefined>) => request<T>({ host: 'gateway', method, path, body, query, headers: auth() });
  const s = g.command('skill').description('skills with code run in the sandbox (/api/skills*): list, install, get, mode, rm, run, executions, registry, marketplace');
  const installed = async (r: { replaced: boolean; skill: SkillView }) => {
    if (outputFormat() !== 'table') return printData(r);
    process.stdout.write(`${r.replaced ? 'replaced' : 'installed'} ${r.skill.name} ${r.skill.version} (${r.skill.id}, mode ${r.skill.mode})\n`);
  };

  s.command('list')
    .description('installed skills')
    .option('-q, --query <text>', 'name or description containing')
    .addOption(new Option('--mode <mode>', 'on, off or auto').choices(MODES))
    .addOption(new Option('--source <source>', 'local, registry or marketplace').choices(['local', 'registry', 'marketplace']))
    .option('--limit <n>', 'per page (1-500)', intOption('--limit'), 50)
    .option('--page <n>', 'page number', intOption('--page'))
    .action(
      action(async (o: { query?: string; mode?: string; source?: string; limit: number; page?: number }) => {
        const r = await api<{ skills: SkillView[] }>('GET', '/api/skills', undefined, { q: o.query, mode: o.mode, source: o.source, limit: o.limit, page: o.page });
        await printRows(
          r.skills,
          [
            { header: 'id', get: (x) => x.id },
            { header: 'name', get: (x) => x.name },
            { header: 'version', get: (x) => x.version },
            { header: 'mode', get: (x) => x.mode },
            { header: 'source', get: (x) => x.source },
            { header: 'api key', get: (x) => x.apiKeyId ?? '' },
            { header: 'description', get: (x) => x.description },
          ],
          r,
        );
      }),
    );
  s.command('install <manifest>')
    .description('install (or replace) a skill from a manifest file, a folder with skill.json, or an http(s) URL the daemon fetches')
    .addOption(new Option('--mode <mode>', 'on (default), off or auto').choices(MODES))
    .addOption(new Option('--from <index>', 'install <manifest> by name from the registry or the marketplace').choices(['registry', 'marketplace']))
    .option('--version <v>', 'with --from: this version')
    .action(
      action(async (manifest: string, o: { mode?: string; from?: string; version?: string }) => {
        if (o.from) {
          return installed(await api('POST', `/api/skills/${o.from}/install`, { name: manifest, ...(o.version ? { version: o.version } : {}), ...(o.mode ? { mode: o.mode } : {}) }));
        }
        const body = /^https?:\/\//.test(manifest) ? { url: manifest } : { manifest: readManifest(manifest) };
        await installed(await api('POST', '/api/skills/install', { ...body, ...(o.mode ? { mode: o.mode } : {}) }));
      }),
    );
  s.command('get <id>')
    .description('one skill with its handler code')
    .action(
      action(async (id: string) => {
        const v = await api<SkillView>('GET', `/api/skills/${enc(id)}`);
        await printObject(
          [
            ['id', v.id],
            ['name', v.name],
            ['version', v.version],
            ['mode', v.mode],
            ['source', v.source],
            ['api key', v.apiKeyId ?? ''],
            ['description', v.description],
            ['schema', JSON.stringify(v.schema)],
            ['handler', v.handlerCode ?? ''],
          ],
          v,
        );
      }),
    );
  s.command('mode <id> <mode>')
    .description('on (run through executions), auto (also offered to models as a tool) or off')
    .action(
      action(async (id: string, mode: string) => {
        if (!MODES.includes(mode)) throw new UsageError('mode must be on, off or auto');
        const v = await api<SkillView>('PUT', `/api/skills/${enc(id)}`, { mode });
        if (outputFormat() !== 'table') return printData(v);
        process.stdout.write(`${v.name}: mode ${v.mode}\n`);
      }),
    );
  s.command('rm <id>')
    .description('delete a skill')
    .action(
      action(async (id: string) => {
        const r = await api<{ id: string }>('DELETE', `/api/skills/${enc(id)}`);
        if (outputFormat() !== 'table') return printData(r);
        process.stdout.write(`deleted ${r.id}\n`);
      }),
    );
  s.command('run <name>')
    .description('run a skill now and print its output; exit status 1 when it failed')
    .option('--input <json>', 'the input (JSON)', '{}')
    .option('--input-file <file>', 'read the input from a JSON file')
    .option('--api-key-id <id>', 'run as this API key (its own skill of that name first)')
    .option('--session <id>', 'session tag for the execution record')
    .action(
      action(async (name: string, o: { input: string; inputFile?: string; apiKeyId?: string; session?: string }) => {
        const input = o.inputFile ? jsonArg(readFileSync(o.inputFile, 'utf8'), o.inputFile) : jsonArg(o.input, '--input');
        const e = await api<ExecutionView>('POST', '/api/skills/executions', { skillName: name, input, ...(o.apiKeyId ? { apiKeyId: o.apiKeyId } : {}), ...(o.session ? { sessionId: o.session } : {}) });
        if (!e.success) process.exitCode = 1;
        if (outputFormat() !== 'table') return printData(e);
        if (e.success) process.stdout.write(`${JSON.stringify(e.output)}\n`);
        else process.stderr.write(`${e.status}: ${e.error}\n`);
      }),
    );
  s.command('executions')
    .description('recent executions, newest first')
    .option('--api-key-id <id>', 'of one API key')
    .option('--skill <name>', 'of one skill')
    .option('--limit <n>', 'how many (1-500)', intOption('--limit'), 50)
    .action(
      action(async (o: { apiKeyId?: string; skill?: string; limit: number }) => {
        const r = await api<{ executions: ExecutionView[] }>('GET', '/api/skills/executions', undefined, { apiKeyId: o.apiKeyId, skillName: o.skill, limit: o.limit });
        await printRows(
          r.executions,
          [
            { header: 'id', get: (x) => x.id },
            { header: 'skill', get: (x) => x.skillName },
            { header: 'status', get: (x) => x.status },
            { header: 'ms', get: (x) => x.durationMs },
            { header: 'api key', get: (x) => x.apiKeyId ?? '' },
            { header: 'created', get: (x) => x.createdAt },
            { header: 'error', get: (x) => x.error ?? '' },
          ],
          r,
        );
      }),
    );
  for (const which of ['registry', 'marketplace'] as const) {
    s.command(`${which} [query]`)
      .description(`search the configured skill ${which} (gateway.yaml skills.${which})`)
      .option('--limit <n>', 'how many (1-200)', intOption('--limit'), 20)
      .action(
        action(async (query: string | undefined, o: { limit: number }) => {
          const r = await api<{ skills: { name: string; version: string; description: string }[] }>('GET', `/api/skills/${which}`, undefined, { q: query, limit: o.limit });
          await printRows(
            r.skills,
            [
              { header: 'name', get: (x) => x.name },
              { header: 'version', get: (x) => x.version },
              { header: 'description', get: (x) => x.description },
            ],
            r,
          );
        }),
      );
  }

  const a = g.command('agent-skill').description('prompt-based agent skills (/api/agent-skills*): list, get, raw, add, set, rm, generate');
  a.command('list')
    .description('agent skills')
    .option('-q, --query <text>', 'name or description containing')
    .action(
      action(async (o: { query?: string }) => {
        const r = await api<{ agentSkills: AgentSkillView[] }>('GET', '/api/agent-skills', undefined, { q: o.query, limit: 500 });
        await printRows(
          r.agentSkills,
          [
            { header: 'id', get: (x) => x.id },
            { header: 'name', get: (x) => x.name },
            { header: 'model', get: (x) => x.model ?? '' },
            { header: 'description', get: (x) => x.description },
          ],
          r,
        );
      }),
    );
  a.command('get <id-or-name>')
    .description('one agent skill')
    .action(
      action(async (id: string) => {
        const v = await api<AgentSkillView>('GET', `/api/agent-skills/${enc(id)}`);
        await printObject(
          [
            ['id', v.id],
            ['name', v.name],
            ['description', v.description],
            ['model', v.model ?? ''],
            ['temperature', v.temperature ?? ''],
            ['prompt', v.prompt],
          ],
          v,
        );
      }),
    );
  a.command('raw <id-or-name>')
    .description('the agent skill as SKILL.md (front matter and prompt)')
    .action(
      action(async (id: string) => {
        process.stdout.write(await api<string>('GET', `/api/agent-skills/${enc(id)}/raw`));
      }),
    );
  a.command('add <name>')
    .description('add an agent skill')
    .requiredOption('--description <text>', 'what it does and when to use it')
    .option('--prompt <text>', 'the instructions')
    .option('--prompt-file <file>', 'read the instructions from a file (Markdown)')
    .option('--model <model>', 'the model it is meant for')
    .option('--temperature <t>', 'sampling temperature (0-2)', numberOption('--temperature'))
    .action(
      action(async (name: string, o: { description: string; prompt?: string; promptFile?: string; model?: string; temperature?: number }) => {
        const prompt = o.promptFile ? readFileSync(o.promptFile, 'utf8') : o.prompt;
        if (!prompt) throw new UsageError('give --prompt or --prompt-file');
        const v = await api<AgentSkillView>('POST', '/api/agent-skills', { name, description: o.description, prompt, ...(o.model ? { model: o.model } : {}), ...(o.temperature !== undefined ? { temperature: o.temperature } : {}) });
        if (outputFormat() !== 'table') return printData(v);
        process.stdout.write(`${v.id}\n`);
      }),
    );
  a.command('set <id-or-name>')
    .description('change an agent skill')
    .option('--description <text>', 'new description')
    .option('--prompt-file <file>', 'new instructions from a file')
    .option('--model <model>', 'new model ("none" clears it)')
    .action(
      action(async (id: string, o: { description?: string; promptFile?: string; model?: string }) => {
        const v = await api<AgentSkillView>('PUT', `/api/agent-skills/${enc(id)}`, {
          ...(o.description ? { description: o.description } : {}),
          ...(o.promptFile ? { prompt: readFileSync(o.promptFile, 'utf8') } : {}),
          ...(o.model ? { model: o.model === 'none' ? null : o.model } : {}),
        });
        if (outputFormat() !== 'table') return printData(v);
        process.stdout.write(`updated ${v.name}\n`);
      }),
    );
  a.command('rm <id-or-name>')
    .description('delete an agent skill')
    .action(
      action(async (id: string) => {
        const r = await api<{ id: string }>('DELETE', `/api/agent-skills/${enc(id)}`);
        if (outputFormat() !== 'table') return printData(r);
        process.stdout.write(`deleted ${r.id}\n`);
      }),
    );
  a.command('generate <description>')
    .description('draft an agent skill with a model through the gateway; prints it as SKILL.md (--save keeps it)')
    .requiredOption('--model <model>', 'the model that writes the draft')
    .option('--name <name>', 'the name to give it')
    .option('--save', 'save the draft as an agent skill')
    .action(
      action(async (description: string, o: { model: string; name?: string; save?: boolean }) => {
        const r = await api<{ draft: { name: string; description: string; prompt: string }; saved?: AgentSkillView }>('POST', '/api/agent-skills/generate', { description, model: o.model, ...(o.name ? { name: o.name } : {}), ...(o.save ? { save: true } : {}) });
        if (outputFormat() !== 'table') return printData(r);
        process.stdout.write(`---\nname: ${r.draft.name}\ndescription: ${JSON.stringify(r.draft.description)}\n---\n\n${r.draft.prompt.trimEnd()}\n`);
        if (r.saved) process.stderr.write(`saved as ${r.saved.id}\n`);
      }),
    );
}
