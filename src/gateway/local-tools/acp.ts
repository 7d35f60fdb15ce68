/**
 * Agent Client Protocol (ACP) agents on this machine: the known ones and custom ones the operator
 * adds (kept in the gateway database), each detected by looking its binary up on PATH and running it
 * with `--version`: the binary is a plain program name (no path, no shell syntax), run as an argument
 * vector without a shell and with a timeout. Nothing a caller sends becomes a command line.
 * Detection results are cached for `cacheTtlMs` (60 s); `refresh` detects again at once.
 */
import type { GatewayStore } from '../store.js';
import { detect } from './detect.js';

export interface AcpAgentSpec {
  id: string;
  name: string;
  /** A program name looked up on PATH (BINARY_NAME). */
  binary: string;
  providerAlias: string | null;
  /** How an editor starts it as an ACP server. */
  spawnArgs: string[];
  protocol: string;
}

export interface AcpAgent extends AcpAgentSpec {
  version: string | null;
  installed: boolean;
  isCustom: boolean;
  commandPath: string | null;
  reason: string | null;
}

export const BUILT_IN_AGENTS: AcpAgentSpec[] = [
  { id: 'gemini', name: 'Gemini CLI', binary: 'gemini', providerAlias: 'gemini', spawnArgs: ['--experimental-acp'], protocol: 'acp' },
  { id: 'claude-code', name: 'Claude Code (ACP adapter)', binary: 'claude-code-acp', providerAlias: 'anthropic', spawnArgs: [], protocol: 'acp' },
  { id: 'codex', name: 'Codex (ACP adapter)', binary: 'codex-acp', providerAlias: 'openai', spawnArgs: [], protocol: 'acp' },
  { id: 'goose', name: 'Goose', binary: 'goose', providerAlias: null, spawnArgs: ['acp'], protocol: 'acp' },
];

/** A binary's name: letters, digits, `.`, `_`, `+`, `-`; no path separator, no shell syntax, not a path. */
export const BINARY_NAME = '^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$';
const BINARY_NAME_RE = new RegExp(BINARY_NAME);
/** The one argument detection runs an agent with. */
export const VERSION_FLAG = '--version';
/** How long detection waits for the version. */
const DETECT_TIMEOUT_MS = 5000;

export const CACHE_TTL_MS = 60_000;
const SETTING = 'acp.custom_agents';

export class AcpAgents {
  private cache: { at: number; agents: AcpAgent[] } | undefined;

  constructor(
    private readonly db: GatewayStore,
    private readonly env: () => NodeJS.ProcessEnv,
    private readonly now: () => number,
  ) {}

  custom(): AcpAgentSpec[] {
    const raw = this.db.getSetting(SETTING);
    if (!raw) return [];
    let list: unknown;
    try {
      list = JSON.parse(raw);
    } catch {
      return [];
    }
    // The setting can come from an imported or restored database: only entries of the spec's shape
    // are kept, and only the spec's fields (a `versionCommand` stored by an earlier version is
    // dropped, never run). A binary that is not a string is kept as '' and reported, never run.
    if (!Array.isArray(list)) return [];
    const str = (v: unknown): v is string => typeof v === 'string';
    return list
      .filter((a): a is Record<string, unknown> => a !== null && typeof a === 'object' && !Array.isArray(a) && str(a.id))
      .map((a) => ({
        id: a.id as string,
        name: str(a.name) ? a.name : (a.id as string),
        binary: str(a.binary) ? a.binary : '',
        providerAlias: str(a.providerAlias) ? a.providerAlias : null,
        spawnArgs: Array.isArray(a.spawnArgs) ? a.spawnArgs.filter(str) : [],
        protocol: str(a.protocol) ? a.protocol : 'acp',
      }));
  }

  saveCustom(a: AcpAgentSpec): { created: boolean } {
    const list = this.custom();
    const i = list.findIndex((x) => x.id === a.id);
    if (i >= 0) list[i] = a;
    else list.push(a);
    this.db.setSetting(SETTING, JSON.stringify(list));
    this.cache = undefined;
    return { created: i < 0 };
  }

  removeCustom(id: string): boolean {
    const list = this.custom();
    const next = list.filter((x) => x.id !== id);
    if (next.length === list.length) return false;
    this.db.setSetting(SETTING, JSON.stringify(next));
    this.cache = undefined;
    return true;
  }

  /** Detected agents (from the cache while it is younger than CACHE_TTL_MS, unless `refresh`). */
  async list(refresh = false): Promise<{ agents: AcpAgent[]; cacheAge: number }> {
    const now = this.now();
    if (!refresh && this.cache && now - this.cache.at < CACHE_TTL_MS) return { agents: this.cache.agents, cacheAge: now - this.cache.at };
    const specs = [...BUILT_IN_AGENTS.map((s) => ({ s, custom: false })), ...this.custom().map((s) => ({ s, custom: true }))];
    const agents = await Promise.all(
      specs.map(async ({ s, custom }): Promise<AcpAgent> => {
        // A stored name from before the rule (a path, shell syntax) is reported, not run.
        if (!BINARY_NAME_RE.test(s.binary)) return { ...s, version: null, installed: false, isCustom: custom, commandPath: null, reason: `binary ${JSON.stringify(s.binary)} is not a program name on PATH; not run` };
        const d = await detect(s.binary, [VERSION_FLAG], this.env(), DETECT_TIMEOUT_MS);
        return { ...s, version: d.version, installed: d.installed, isCustom: custom, commandPath: d.commandPath, reason: d.reason };
      }),
    );
    this.cache = { at: this.now(), agents };
    return { agents, cacheAge: 0 };
  }
}
