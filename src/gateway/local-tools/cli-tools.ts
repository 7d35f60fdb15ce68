/**
 * AI coding CLIs on this machine and their gateway settings: where each keeps the address and key of
 * its model API, read (keys masked), pointed at this gateway (the file backed up first, other
 * settings kept), and restored from a backup. Backups live in DIR/backups/cli-tools; a file that did
 * not exist is backed up as "absent", and restoring that backup removes it again.
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { homedir } from 'node:os';
import { parseDocument } from 'yaml';
import { GatewayError } from '../errors.js';

export interface ApplyInput {
  /** The gateway's base URL as the tool should reach it (no /v1). */
  baseUrl: string;
  apiKey: string;
  model?: string;
}

export interface ToolSettings {
  /** The API address the file points the tool at, if any. */
  baseUrl: string | null;
  hasKey: boolean;
  model: string | null;
}

export interface CliTool {
  id: string;
  name: string;
  /** The seed's anonymous route name (`tool-a` … `tool-d`). */
  alias: string;
  binary: string;
  versionArgs: string[];
  /** Settings file, relative to the home directory. */
  file: string;
  read(text: string): ToolSettings;
  /** The new file text with the gateway settings merged into `text` ('' when the file is absent). */
  apply(text: string, a: ApplyInput): string;
}

const jsonOf = (text: string): Record<string, any> => {
  if (!text.trim()) return {};
  const v = JSON.parse(text) as unknown;
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('the settings file is not a JSON object');
  return v as Record<string, any>;
};
const envLines = (text: string) => new Map(text.split('\n').filter((l) => /^\s*[A-Za-z_][A-Za-z0-9_]*\s*=/.test(l)).map((l) => [l.slice(0, l.indexOf('=')).trim(), l.slice(l.indexOf('=') + 1).trim().replace(/^["']|["']$/g, '')]));

export const CLI_TOOLS: CliTool[] = [
  {
    id: 'claude',
    name: 'Claude Code',
    alias: 'tool-a',
    binary: 'claude',
    versionArgs: ['--version'],
    file: '.claude/settings.json',
    read(text) {
      const env = (jsonOf(text).env ?? {}) as Record<string, string>;
      return { baseUrl: env.ANTHROPIC_BASE_URL ?? null, hasKey: !!(env.ANTHROPIC_AUTH_TOKEN ?? env.ANTHROPIC_API_KEY), model: env.ANTHROPIC_MODEL ?? null };
    },
    apply(text, a) {
      const j = jsonOf(text);
      j.env = { ...(j.env ?? {}), ANTHROPIC_BASE_URL: a.baseUrl, ANTHROPIC_AUTH_TOKEN: a.apiKey, ...(a.model ? { ANTHROPIC_MODEL: a.model } : {}) };
      return `${JSON.stringify(j, null, 2)}\n`;
    },
  },
  {
    id: 'opencode',
    name: 'opencode',
    alias: 'tool-b',
    binary: 'opencode',
    versionArgs: ['--version'],
    file: '.config/opencode/opencode.json',
    read(text) {
      const p = jsonOf(text).provider?.ctl;
      return { baseUrl: p?.options?.baseURL ?? null, hasKey: !!p?.options?.apiKey, model: jsonOf(text).model ?? null };
    },
    apply(text, a) {
      const j = jsonOf(text);
      j.$schema ??= 'https://opencode.ai/config.json';
      j.provider = { ...(j.provider ?? {}), ctl: { npm: '@ai-sdk/openai-compatible', name: 'ctl gateway', options: { baseURL: `${a.baseUrl}/v1`, apiKey: a.apiKey }, models: a.model ? { [a.model]: {} } : (j.provider?.ctl?.models ?? {}) } };
      if (a.model) j.model = `ctl/${a.model}`;
      return `${JSON.stringify(j, null, 2)}\n`;
    },
  },
  {
    id: 'aider',
    name: 'Aider',
    alias: 'tool-c',
    binary: 'aider',
    versionArgs: ['--version'],
    file: '.aider.conf.yml',
    read(text) {
      const d = (parseDocument(text).toJS() ?? {}) as Record<string, string>;
      return { baseUrl: d['openai-api-base'] ?? null, hasKey: !!d['openai-api-key'], model: d.model ?? null };
    },
    apply(text, a) {
      const doc = parseDocument(text || '{}');
      if (doc.errors.length) throw new Error(`the settings file is not YAML: ${doc.errors[0]!.message}`);
      if (!text.trim()) doc.contents = doc.createNode({}) as never;
      doc.set('openai-api-base', `${a.baseUrl}/v1`);
      doc.set('openai-api-key', a.apiKey);
      if (a.model) doc.set('model', `openai/${a.model}`);
      return doc.toString();
    },
  },
  {
    id: 'gemini',
    name: 'Gemini CLI',
    alias: 'tool-d',
    binary: 'gemini',
    versionArgs: ['--version'],
    file: '.gemini/.env',
    read(text) {
      const env = envLines(text);
      return { baseUrl: env.get('GOOGLE_GEMINI_BASE_URL') ?? null, hasKey: !!env.get('GEMINI_API_KEY'), model: env.get('GEMINI_MODEL') ?? null };
    },
    apply(text, a) {
      const set = new Map<string, string>([['GOOGLE_GEMINI_BASE_URL', a.baseUrl], ['GEMINI_API_KEY', a.apiKey], ...(a.model ? [['GEMINI_MODEL', a.model] as [string, string]] : [])]);
      const lines = text.split('\n').filter((l, i, all) => !(i === all.length - 1 && l === ''));
      const out = lines.map((l) => {
        const k = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=/.exec(l)?.[1];
        if (k && set.has(k)) {
          const v = set.get(k)!;
          set.delete(k);
          return `${k}=${v}`;
        }
        return l;
      });
      for (const [k, v] of set) out.push(`${k}=${v}`);
      return `${out.join('\n')}\n`;
    },
  },
];

export function toolOf(idOrAlias: string): CliTool {
  const t = CLI_TOOLS.find((x) => x.id === idOrAlias || x.alias === idOrAlias);
  if (!t) throw new GatewayError('not-found', `unknown CLI tool ${idOrAlias} (known: ${CLI_TOOLS.map((x) => x.id).join(', ')})`);
  return t;
}

export interface BackupInfo {
  id: string;
  tool: string;
  path: string;
  /** The file did not exist when backed up: restoring removes it. */
  absent: boolean;
  bytes: number;
  createdAt: string;
}

const BACKUP = /^([a-z]+)-(\d+)-([0-9a-f]{6})\.(bak|absent)$/;

export class CliToolSettings {
  constructor(
    private readonly home: string,
    private readonly backupDir: string,
    private readonly now: () => number,
  ) {}

  pathOf(t: CliTool): string {
    return join(this.home, t.file);
  }

  read(t: CliTool): { path: string; exists: boolean } & ToolSettings & { error?: string } {
    const path = this.pathOf(t);
    if (!existsSync(path)) return { path, exists: false, baseUrl: null, hasKey: false, model: null };
    try {
      return { path, exists: true, ...t.read(readFileSync(path, 'utf8')) };
    } catch (e) {
      return { path, exists: true, baseUrl: null, hasKey: false, model: null, error: (e as Error).message };
    }
  }

  backup(t: CliTool): BackupInfo {
    mkdirSync(this.backupDir, { recursive: true, mode: 0o700 });
    const path = this.pathOf(t);
    const absent = !existsSync(path);
    const id = `${t.id}-${this.now()}-${randomBytes(3).toString('hex')}.${absent ? 'absent' : 'bak'}`;
    const dest = join(this.backupDir, id);
    if (absent) writeFileSync(dest, '', { mode: 0o600 });
    else copyFileSync(path, dest);
    return this.info(id)!;
  }

  private info(id: string): BackupInfo | undefined {
    const m = BACKUP.exec(id);
    if (!m) return undefined;
    const t = CLI_TOOLS.find((x) => x.id === m[1]);
    if (!t) return undefined;
    return { id, tool: t.id, path: this.pathOf(t), absent: m[4] === 'absent', bytes: statSync(join(this.backupDir, id)).size, createdAt: new Date(Number(m[2])).toISOString() };
  }

  backups(tool?: string): BackupInfo[] {
    if (!existsSync(this.backupDir)) return [];
    return readdirSync(this.backupDir)
      .map((f) => this.info(f))
      .filter((b): b is BackupInfo => b !== undefined && (tool === undefined || b.tool === tool))
      .sort((a, b) => (a.id < b.id ? 1 : -1));
  }

  /** Point the tool at the gateway: the file backed up first, written atomically, its other settings kept. */
  apply(t: CliTool, a: ApplyInput): { path: string; backup: BackupInfo } {
    const path = this.pathOf(t);
    const before = existsSync(path) ? readFileSync(path, 'utf8') : '';
    let text: string;
    try {
      text = t.apply(before, a);
    } catch (e) {
      throw new GatewayError('invalid', `${path}: ${(e as Error).message}; nothing was changed`);
    }
    const backup = this.backup(t);
    mkdirSync(dirname(path), { recursive: true });
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, text, { mode: 0o600 });
    renameSync(tmp, path);
    return { path, backup };
  }

  /** Put a backup back (the newest of the tool when no id); the current file is backed up first. */
  restore(t: CliTool, id?: string): { path: string; restored: BackupInfo; previous: BackupInfo } {
    const b = id ? this.backups(t.id).find((x) => x.id === id) : this.backups(t.id)[0];
    if (!b) throw new GatewayError('not-found', id ? `backup ${id} of ${t.id} not found` : `no backup of ${t.id}`);
    const previous = this.backup(t);
    const path = this.pathOf(t);
    if (b.absent) rmSync(path, { force: true });
    else {
      mkdirSync(dirname(path), { recursive: true });
      copyFileSync(join(this.backupDir, b.id), path);
    }
    return { path, restored: b, previous };
  }
}

/** ctl.yaml `gateway.cli_tools.home`: the home directory whose CLI settings files /api/cli-tools reads and writes (default: the daemon user's). */
export function cliToolsHome(config: Record<string, unknown>): string {
  const c = config.cli_tools;
  if (c === undefined || c === null) return homedir();
  if (typeof c !== 'object' || Array.isArray(c)) throw new Error('ctl.yaml gateway.cli_tools must be a mapping');
  for (const k of Object.keys(c)) if (k !== 'home') throw new Error(`ctl.yaml gateway.cli_tools: unknown field ${k}`);
  const home = (c as { home?: unknown }).home;
  if (home === undefined) return homedir();
  if (typeof home !== 'string' || !isAbsolute(home)) throw new Error('ctl.yaml gateway.cli_tools.home must be an absolute path');
  return home;
}
