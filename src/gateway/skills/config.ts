/**
 * gateway.yaml `skills:`: the sandbox's limits, and where skills are searched and installed from.
 *
 *   skills:
 *     timeout_ms: 5000          # per execution
 *     memory_mb: 64             # per execution (the isolate's heap)
 *     runners: 2                # runner processes (executions in parallel)
 *     max_tool_rounds: 4        # auto skills: model → skill → model rounds in one chat request
 *     root: skills              # local installs ({path}) read folders under here only (relative: to the state dir)
 *     registry: {url: "https://skills.example/index.json"}
 *     marketplace: {url: "https://market.example/index.json", api_key_env: SKILLS_MARKET_KEY}
 *
 * Both indexes are one JSON document {skills: [{name, version, description, url}]}, `url` the
 * manifest's (relative URLs resolve against the index). Fetched under the egress SSRF policy.
 */
import { join, resolve } from 'node:path';
import { Type } from '@sinclair/typebox';
import { compile, describeErrors } from '../../http/schema.js';

export interface SkillIndexConfig {
  url: string;
  apiKey?: string;
}

export interface SkillsConfig {
  timeoutMs: number;
  memoryMb: number;
  runners: number;
  maxToolRounds: number;
  /** `skills.root` as written (absolute, or relative to the state dir); unset: DIR/skills. */
  root?: string;
  registry?: SkillIndexConfig;
  marketplace?: SkillIndexConfig;
}

export const DEFAULT_SKILLS: SkillsConfig = { timeoutMs: 5000, memoryMb: 64, runners: 2, maxToolRounds: 4 };

const index = Type.Object(
  { url: Type.String({ pattern: '^https?://' }), api_key: Type.Optional(Type.String({ minLength: 1 })), api_key_env: Type.Optional(Type.String({ minLength: 1 })) },
  { additionalProperties: false },
);
const validate = compile(
  Type.Object(
    {
      timeout_ms: Type.Optional(Type.Integer({ minimum: 10, maximum: 120_000 })),
      memory_mb: Type.Optional(Type.Integer({ minimum: 8, maximum: 1024 })),
      runners: Type.Optional(Type.Integer({ minimum: 1, maximum: 32 })),
      max_tool_rounds: Type.Optional(Type.Integer({ minimum: 1, maximum: 16 })),
      root: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
      registry: Type.Optional(index),
      marketplace: Type.Optional(index),
    },
    { additionalProperties: false },
  ),
);

type RawIndex = { url: string; api_key?: string; api_key_env?: string };

function indexOf(raw: RawIndex | undefined, where: string, env: NodeJS.ProcessEnv): SkillIndexConfig | undefined {
  if (!raw) return undefined;
  if (raw.api_key !== undefined && raw.api_key_env !== undefined) throw new Error(`${where}: set api_key or api_key_env, not both`);
  const apiKey = raw.api_key ?? (raw.api_key_env !== undefined ? env[raw.api_key_env] : undefined);
  if (raw.api_key_env !== undefined && !apiKey) throw new Error(`${where}: environment variable ${raw.api_key_env} is not set`);
  return { url: raw.url, ...(apiKey ? { apiKey } : {}) };
}

export function parseSkills(raw: unknown, env: NodeJS.ProcessEnv): SkillsConfig {
  if (raw === undefined || raw === null) return DEFAULT_SKILLS;
  if (!validate(raw)) throw new Error(describeErrors(validate.errors, 'skills'));
  const s = raw as { timeout_ms?: number; memory_mb?: number; runners?: number; max_tool_rounds?: number; root?: string; registry?: RawIndex; marketplace?: RawIndex };
  const registry = indexOf(s.registry, 'skills.registry', env);
  const marketplace = indexOf(s.marketplace, 'skills.marketplace', env);
  return {
    timeoutMs: s.timeout_ms ?? DEFAULT_SKILLS.timeoutMs,
    memoryMb: s.memory_mb ?? DEFAULT_SKILLS.memoryMb,
    runners: s.runners ?? DEFAULT_SKILLS.runners,
    maxToolRounds: s.max_tool_rounds ?? DEFAULT_SKILLS.maxToolRounds,
    ...(s.root !== undefined ? { root: s.root } : {}),
    ...(registry ? { registry } : {}),
    ...(marketplace ? { marketplace } : {}),
  };
}

/** The folder local installs read from: `skills.root` (relative paths from the state dir), default DIR/skills. */
export function skillsRoot(stateDir: string, cfg: SkillsConfig): string {
  return cfg.root === undefined ? join(stateDir, 'skills') : resolve(stateDir, cfg.root);
}
