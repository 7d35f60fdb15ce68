/**
 * Plugins: installed into DIR/plugins/<name>, listed in the gateway database, activated and
 * configured through /api/plugins. An active plugin's hooks run on chat requests, in the same sandbox
 * as skills (a runner process, a fresh V8 isolate per call: no require, process, files, network or
 * timers; 1 s and 64 MiB per call), through a narrow API:
 *   onRequest({model, system, messages: [{role, text}]}, config) → {block?, system?, messages?}
 *     `messages`, when returned, has one entry per message: its text replaces that message's text
 *     (images and tool calls stay); `block` refuses the request (400, naming the plugin)
 *   onResponse({model, text}, config) → {text?}   (answers that are not streamed)
 * A plugin whose hook throws, times out, runs out of memory or answers something else is deactivated
 * with the error and the request goes on without it: a plugin never takes the gateway down.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { ajv } from '../../http/schema.js';
import type { Store } from '../../store/index.js';
import type { CanonicalRequest, CanonicalResponse, ContentPart, Message } from '../canonical.js';
import { SandboxPool } from '../skills/sandbox/pool.js';
import type { Hook, PluginPackage } from './package.js';
import type { SchemaStep } from '../schema.js';
import { GatewayError } from '../errors.js';

/** Installed plugins: this capability's share of the gateway's SQLite migrations (placed by version in gateway/schema.ts). */
export const PLUGINS_SCHEMA: SchemaStep[] = [
  {
    // Installed plugins (their code lives in DIR/plugins/<name>).
    version: 14,
    up: `
CREATE TABLE plugins (
  name TEXT PRIMARY KEY,
  version TEXT NOT NULL,
  description TEXT,
  hooks TEXT NOT NULL,
  config_schema TEXT,
  config TEXT NOT NULL DEFAULT '{}',
  active INTEGER NOT NULL DEFAULT 0,
  last_error TEXT,
  installed_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
`,
  },
];

export interface PluginRecord {
  name: string;
  version: string;
  description: string | null;
  hooks: Hook[];
  configSchema: Record<string, unknown> | null;
  config: Record<string, unknown>;
  active: boolean;
  lastError: string | null;
  installedAt: number;
  updatedAt: number;
}

const LIMITS = { timeoutMs: 1000, memoryMb: 64 };

const row = (r: Record<string, unknown>): PluginRecord => ({
  name: r.name as string,
  version: r.version as string,
  description: r.description as string | null,
  hooks: JSON.parse(r.hooks as string) as Hook[],
  configSchema: r.config_schema ? (JSON.parse(r.config_schema as string) as Record<string, unknown>) : null,
  config: JSON.parse(r.config as string) as Record<string, unknown>,
  active: r.active === 1,
  lastError: r.last_error as string | null,
  installedAt: r.installed_at as number,
  updatedAt: r.updated_at as number,
});

/** The sandbox program: the plugin's code, then a call of the hook for `input.stage`. */
function program(code: string): string {
  return `${code}
;
if (input.stage === 'check') return { request: typeof onRequest === 'function', response: typeof onResponse === 'function' };
const __hook = input.stage === 'request' ? (typeof onRequest === 'function' ? onRequest : undefined) : (typeof onResponse === 'function' ? onResponse : undefined);
if (!__hook) return null;
const __out = await __hook(input.payload, input.config);
return __out === undefined ? null : __out;`;
}

const textOf = (parts: ContentPart[]) =>
  parts
    .filter((p) => p.type === 'text')
    .map((p) => (p as { text: string }).text)
    .join('\n');

export class PluginService {
  readonly pool = new SandboxPool(() => 2);
  /** Active plugins with their code, in name order (cached; every chat request reads it). */
  private active: { rec: PluginRecord; code: string }[] | undefined;

  constructor(
    private readonly store: Store,
    readonly dir: string,
    private readonly now: () => number,
    private readonly log: Logger,
  ) {}

  list(): PluginRecord[] {
    return (this.store.prepare('SELECT * FROM plugins ORDER BY name').all() as Record<string, unknown>[]).map(row);
  }

  get(name: string): PluginRecord {
    const r = this.store.prepare('SELECT * FROM plugins WHERE name = ?').get(name) as Record<string, unknown> | undefined;
    if (!r) throw new GatewayError('not-found', `plugin ${name} is not installed`);
    return row(r);
  }

  /** Install (or upgrade) a package: its hooks checked in the sandbox first; installed inactive. */
  async install(pkg: PluginPackage): Promise<{ plugin: PluginRecord; upgraded: boolean }> {
    const m = pkg.manifest;
    const check = await this.pool.run(program(pkg.code), JSON.stringify({ stage: 'check' }), LIMITS);
    if (!check.ok) throw new GatewayError('invalid', `plugin ${m.name} does not load: ${check.error}`);
    const has = JSON.parse(check.output) as { request: boolean; response: boolean };
    for (const h of m.hooks) if (!has[h]) throw new GatewayError('invalid', `plugin ${m.name} declares the ${h} hook but defines no ${h === 'request' ? 'onRequest' : 'onResponse'} function`);
    let config: Record<string, unknown> = m.defaults ?? {};
    let prev: PluginRecord | undefined;
    try {
      prev = this.get(m.name);
      config = { ...config, ...prev.config };
    } catch {
      prev = undefined;
    }
    if (m.config) this.validateConfig(m.config, config, `${m.name} defaults`);
    // The code goes to DIR/plugins/<name>/ (a temporary folder renamed over the old one).
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const tmp = join(this.dir, `.${m.name}.${process.pid}.tmp`);
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { mode: 0o700 });
    writeFileSync(join(tmp, 'plugin.json'), `${JSON.stringify(m, null, 2)}\n`);
    writeFileSync(join(tmp, 'index.js'), pkg.code);
    rmSync(join(this.dir, m.name), { recursive: true, force: true });
    renameSync(tmp, join(this.dir, m.name));
    const t = this.now();
    this.store
      .prepare(
        `INSERT INTO plugins (name, version, description, hooks, config_schema, config, active, last_error, installed_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)
         ON CONFLICT(name) DO UPDATE SET version = excluded.version, description = excluded.description, hooks = excluded.hooks, config_schema = excluded.config_schema,
           config = excluded.config, last_error = NULL, updated_at = excluded.updated_at`,
      )
      .run(m.name, m.version, m.description ?? null, JSON.stringify(m.hooks), m.config ? JSON.stringify(m.config) : null, JSON.stringify(config), prev?.active ? 1 : 0, prev?.installedAt ?? t, t);
    this.active = undefined;
    return { plugin: this.get(m.name), upgraded: prev !== undefined };
  }

  uninstall(name: string): void {
    this.get(name);
    this.store.prepare('DELETE FROM plugins WHERE name = ?').run(name);
    rmSync(join(this.dir, name), { recursive: true, force: true });
    this.active = undefined;
  }

  setActive(name: string, active: boolean, error: string | null = null): PluginRecord {
    this.get(name);
    this.store.prepare('UPDATE plugins SET active = ?, last_error = ?, updated_at = ? WHERE name = ?').run(active ? 1 : 0, error, this.now(), name);
    this.active = undefined;
    return this.get(name);
  }

  private validateConfig(schema: Record<string, unknown>, config: Record<string, unknown>, what: string): void {
    const v = ajv().compile(schema);
    if (!v(config)) throw new GatewayError('invalid', `${what}: ${v.errors?.[0]?.instancePath || '/'} ${v.errors?.[0]?.message ?? 'is invalid'}`);
  }

  setConfig(name: string, config: Record<string, unknown>): PluginRecord {
    const p = this.get(name);
    if (p.configSchema) this.validateConfig(p.configSchema, config, `plugin ${name} config`);
    this.store.prepare('UPDATE plugins SET config = ?, updated_at = ? WHERE name = ?').run(JSON.stringify(config), this.now(), name);
    this.active = undefined;
    return this.get(name);
  }

  get activeCount(): number {
    return this.loaded().length;
  }

  private loaded(): { rec: PluginRecord; code: string }[] {
    if (this.active) return this.active;
    const out: { rec: PluginRecord; code: string }[] = [];
    for (const rec of this.list()) {
      if (!rec.active) continue;
      try {
        out.push({ rec, code: program(readCode(join(this.dir, rec.name))) });
      } catch (e) {
        this.fail(rec.name, `its code cannot be read: ${(e as Error).message}`);
      }
    }
    return (this.active = out);
  }

  private fail(name: string, error: string): void {
    this.log.error({ plugin: name, err: error }, 'gateway: plugin failed and was deactivated');
    this.store.prepare('UPDATE plugins SET active = 0, last_error = ?, updated_at = ? WHERE name = ?').run(error.slice(0, 2000), this.now(), name);
    this.active = undefined;
  }

  /** Run one hook; undefined when it failed (the plugin is then deactivated) or has no answer. */
  private async call(p: { rec: PluginRecord; code: string }, stage: Hook, payload: unknown): Promise<Record<string, unknown> | undefined> {
    const out = await this.pool.run(p.code, JSON.stringify({ stage, payload, config: p.rec.config }), LIMITS);
    if (!out.ok) {
      if (out.kind !== 'busy') this.fail(p.rec.name, `${stage} hook: ${out.error}`);
      return undefined;
    }
    const v = JSON.parse(out.output) as unknown;
    if (v === null) return undefined;
    if (typeof v !== 'object' || Array.isArray(v)) {
      this.fail(p.rec.name, `${stage} hook answered ${JSON.stringify(v).slice(0, 100)}, not an object`);
      return undefined;
    }
    return v as Record<string, unknown>;
  }

  /** The request after every active request hook (in name order); a block is a 400. */
  async onRequest(req: CanonicalRequest): Promise<{ request: CanonicalRequest; applied: string[] }> {
    let cur = req;
    const applied: string[] = [];
    for (const p of this.loaded()) {
      if (!p.rec.hooks.includes('request')) continue;
      const payload = { model: cur.model, system: cur.system ?? null, messages: cur.messages.map((m) => ({ role: m.role, text: textOf(m.content) })) };
      const out = await this.call(p, 'request', payload);
      if (!out) continue;
      if (typeof out.block === 'string' && out.block) throw new GatewayError('invalid', `request blocked by plugin ${p.rec.name}: ${out.block.slice(0, 500)}`, { code: 'plugin_blocked' });
      const next: CanonicalRequest = { ...cur };
      if (typeof out.system === 'string') next.system = out.system;
      if (out.messages !== undefined) {
        const msgs = out.messages as { text?: unknown }[];
        if (!Array.isArray(msgs) || msgs.length !== cur.messages.length || !msgs.every((m) => typeof m?.text === 'string')) {
          this.fail(p.rec.name, `request hook: messages must have one {text} per message (${cur.messages.length})`);
          continue;
        }
        next.messages = cur.messages.map((m, i): Message => {
          const text = msgs[i]!.text as string;
          if (text === textOf(m.content)) return m;
          const others = m.content.filter((c) => c.type !== 'text');
          return { ...m, content: [{ type: 'text', text }, ...others] } as Message;
        });
      }
      cur = next;
      applied.push(p.rec.name);
    }
    return { request: cur, applied };
  }

  /** A whole answer after every active response hook. */
  async onResponse(model: string, res: CanonicalResponse): Promise<string[]> {
    const applied: string[] = [];
    for (const p of this.loaded()) {
      if (!p.rec.hooks.includes('response')) continue;
      const out = await this.call(p, 'response', { model, text: textOf(res.content) });
      if (!out || out.text === undefined) continue;
      if (typeof out.text !== 'string') {
        this.fail(p.rec.name, 'response hook: text must be a string');
        continue;
      }
      res.content = [{ type: 'text', text: out.text }, ...res.content.filter((c) => c.type !== 'text')];
      applied.push(p.rec.name);
    }
    return applied;
  }

  close(): void {
    this.pool.close();
  }
}

/** The installed code of a plugin (always saved as index.js). */
function readCode(dir: string): string {
  return readFileSync(join(dir, 'index.js'), 'utf8');
}
