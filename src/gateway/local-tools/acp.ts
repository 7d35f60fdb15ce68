/**
 * Agent Client Protocol (ACP) agents on this machine: the known ones and custom ones the operator
 * adds (kept in the gateway database), each detected by its binary on PATH and its version command.
 * Detection results are cached for `cacheTtlMs` (60 s); `refresh` detects again at once.
 */
import type { GatewayStore } from '../store.js';
import { detect, which } from './detect.js';

export interface AcpAgentSpec {
  id: string;
  name: string;
  binary: string;
  /** The command that prints its version, as one line (split on spaces; never run through a shell). */
  versionCommand: string;
  providerAlias: string | null;
  /** How an editor starts it as an ACP server. */
  spawnArgs: string[];
  protocol: string;
}

export interface AcpAgent extends Omit<AcpAgentSpec, 'versionCommand'> {
  version: string | null;
  installed: boolean;
  isCustom: boolean;
  commandPath: string | null;
  reason: string | null;
}

export const BUILT_IN_AGENTS: AcpAgentSpec[] = [
  { id: 'gemini', name: 'Gemini CLI', binary: 'gemini', versionCommand: 'gemini --version', providerAlias: 'gemini', spawnArgs: ['--experimental-acp'], protocol: 'acp' },
  { id: 'claude-code', name: 'Claude Code (ACP adapter)', binary: 'claude-code-acp', versionCommand: 'claude-code-acp --version', providerAlias: 'anthropic', spawnArgs: [], protocol: 'acp' },
  { id: 'codex', name: 'Codex (ACP adapter)', binary: 'codex-acp', versionCommand: 'codex-acp --version', providerAlias: 'openai', spawnArgs: [], protocol: 'acp' },
  { id: 'goose', name: 'Goose', binary: 'goose', versionCommand: 'goose --version', providerAlias: null, spawnArgs: ['acp'], protocol: 'acp' },
];

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
    try {
      return JSON.parse(raw) as AcpAgentSpec[];
    } catch {
      return [];
    }
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
        const [cmd, ...args] = s.versionCommand.trim().split(/\s+/);
        // The version command names the binary (or another program); detection looks for the binary itself.
        const d = await detect(cmd === s.binary || !cmd ? s.binary : cmd, cmd ? args : ['--version'], this.env());
        const installed = cmd === s.binary || !cmd ? d.installed : which(s.binary, this.env().PATH) !== null;
        const { versionCommand: _v, ...rest } = s;
        return { ...rest, version: d.version, installed, isCustom: custom, commandPath: d.commandPath, reason: installed ? d.reason : `${s.binary} not found on PATH` };
      }),
    );
    this.cache = { at: this.now(), agents };
    return { agents, cacheAge: 0 };
  }
}
