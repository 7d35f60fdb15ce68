/**
 * Skills: installing a manifest (checked, its schemas compiled), running one (input checked, the
 * handler run in the sandbox pool, output checked, the execution recorded), and fetching manifests
 * and indexes from URLs under the SSRF policy.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { Type } from '@sinclair/typebox';
import type { Logger } from 'pino';
import type { Egress } from '../../egress/index.js';
import { fetchUserUrl, UrlRefusedError } from '../../egress/user-url.js';
import type { Clock } from '../../http/clock.js';
import { GatewayError } from '../errors.js';
import { compile, describeErrors } from '../../http/schema.js';
import { readBounded } from '../providers/api-call.js';
import { skillsRoot, type SkillsConfig } from './config.js';
import { SandboxPool, type RunOutcome } from './sandbox/pool.js';
import { schemaOverLimits } from './schema.js';
import { SchemaLane } from './schema-lane.js';
import { SkillStore, type ExecutionRecord, type SkillMode, type SkillRecord, type SkillSource } from './store.js';

/** A tool name every model family accepts. */
export const SKILL_NAME = '^[A-Za-z0-9_-]{1,64}$';
const MAX_CODE = 256 * 1024;
const MAX_MANIFEST_BYTES = 1024 * 1024;
const MAX_IO = 1024 * 1024;

const validateManifest = compile(
  Type.Object(
    {
      name: Type.String({ pattern: SKILL_NAME }),
      version: Type.String({ minLength: 1, maxLength: 64 }),
      description: Type.String({ maxLength: 2000 }),
      schema: Type.Object({ input: Type.Optional(Type.Unknown()), output: Type.Optional(Type.Unknown()) }, { additionalProperties: false }),
      handlerCode: Type.String({ minLength: 1, maxLength: MAX_CODE }),
      apiKeyId: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 256 }), Type.Null()])),
      mode: Type.Optional(Type.Union([Type.Literal('on'), Type.Literal('off'), Type.Literal('auto')])),
    },
    { additionalProperties: true },
  ),
);

export interface Manifest {
  name: string;
  version: string;
  description: string;
  schema: { input?: unknown; output?: unknown };
  handlerCode: string;
  apiKeyId?: string | null;
  mode?: SkillMode;
}

export interface ExecuteRequest {
  skillName: string;
  apiKeyId?: string;
  input?: unknown;
  sessionId?: string;
}

export interface IndexEntry {
  name: string;
  version: string;
  description: string;
  url: string;
}

export class SkillService {
  readonly store: SkillStore;
  readonly pool: SandboxPool;
  private readonly schemas = new SchemaLane();

  constructor(
    store: SkillStore,
    private readonly config: () => SkillsConfig,
    private readonly egress: Egress,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly keyExists: (id: string) => boolean,
    private readonly stateDir: string,
  ) {
    this.store = store;
    this.pool = new SandboxPool(() => this.config().runners);
    // The default root is made for the operator to drop skill folders into; a configured one must exist.
    if (this.config().root === undefined) {
      try {
        mkdirSync(this.localRoot(), { recursive: true, mode: 0o750 });
      } catch (e) {
        this.log.warn(`gateway: cannot create the skills root ${this.localRoot()}: ${(e as Error).message}`);
      }
    }
  }

  /** Check a manifest; 400 naming the first problem. Its schemas are measured, then compiled on the schema lane. */
  async checkManifest(raw: unknown): Promise<Manifest> {
    if (!validateManifest(raw)) throw new GatewayError('invalid', `manifest: ${describeErrors(validateManifest.errors, 'manifest')}`, { code: 'invalid_manifest' });
    const m = raw as Manifest;
    const over = schemaOverLimits(m.schema.input, 'schema.input') ?? schemaOverLimits(m.schema.output, 'schema.output');
    if (over) throw new GatewayError('invalid', `manifest: ${over}`, { code: 'invalid_manifest' });
    if (m.apiKeyId && !this.keyExists(m.apiKeyId)) throw new GatewayError('invalid', `manifest: apiKeyId: no API key ${JSON.stringify(m.apiKeyId)}`, { code: 'invalid_manifest' });
    let problem: string | undefined;
    try {
      problem = await this.schemas.check(m.schema);
    } catch (e) {
      throw new GatewayError('unavailable', `manifest: ${(e as Error).message}`, { code: 'schema_check_unavailable', cause: e });
    }
    if (problem) throw new GatewayError('invalid', `manifest: ${problem}`, { code: 'invalid_manifest' });
    return m;
  }

  /** Install (or replace the skill of the same name and owner); the mode is kept on a replace unless given. */
  async install(raw: unknown, source: SkillSource): Promise<{ skill: SkillRecord; replaced: boolean }> {
    const m = await this.checkManifest(raw);
    const apiKeyId = m.apiKeyId ?? undefined;
    const prev = this.store.sameSlot(m.name, apiKeyId);
    const now = this.clock.now();
    const s: SkillRecord = {
      id: prev?.id ?? `skl_${randomBytes(9).toString('base64url')}`,
      name: m.name,
      version: m.version,
      description: m.description,
      schema: m.schema,
      handlerCode: m.handlerCode,
      ...(apiKeyId ? { apiKeyId } : {}),
      mode: m.mode ?? prev?.mode ?? 'on',
      source,
      createdAt: prev?.createdAt ?? now,
      updatedAt: now,
    };
    this.store.save(s);
    return { skill: s, replaced: prev !== undefined };
  }

  /**
   * Check a JSON text against one of a skill's schemas on the schema lane: the first problem (as a
   * message rooted at `which`), or `broken` when the stored schema cannot be used any more (too big for
   * today's limits, not compilable, or the lane failed).
   */
  private async checkAgainst(s: SkillRecord, which: 'input' | 'output', text: string): Promise<{ problem?: string; broken?: string }> {
    const over = schemaOverLimits(s.schema[which], `schema.${which}`);
    if (over) return { broken: `${over}; install it again with a smaller schema` };
    try {
      const r = await this.schemas.validate(`${s.id}:${s.updatedAt}`, s.schema, which, text);
      if (r.error !== undefined) return { broken: r.error };
      return r.problem ? { problem: describeErrors([r.problem as never], which) } : {};
    } catch (e) {
      return { broken: (e as Error).message };
    }
  }

  /** Where local installs ({path}) may read from: gateway.yaml skills.root, relative to the state dir; default DIR/skills. */
  localRoot(): string {
    return skillsRoot(this.stateDir, this.config());
  }

  now(): number {
    return this.clock.now();
  }


  /**
   * Run a skill by name for a caller. Input and output are checked against the manifest's schemas.
   * Every run is recorded, whatever its outcome; the record is returned.
   */
  async execute(req: ExecuteRequest): Promise<ExecutionRecord> {
    const s = this.store.byName(req.skillName, req.apiKeyId);
    if (!s) throw new GatewayError('not-found', `skill ${JSON.stringify(req.skillName)} not found`, { code: 'skill_not_found' });
    if (s.mode === 'off') throw new GatewayError('conflict', `skill ${s.name} is off (PUT /api/skills/${s.id} {"mode":"on"} turns it on)`, { code: 'skill_disabled' });
    return this.run(s, req.input ?? {}, req.apiKeyId, req.sessionId);
  }

  async run(s: SkillRecord, input: unknown, apiKeyId: string | undefined, sessionId: string | undefined): Promise<ExecutionRecord> {
    const cfg = this.config();
    const inputText = JSON.stringify(input) ?? 'null';
    const rec: ExecutionRecord = {
      id: `exe_${randomBytes(9).toString('base64url')}`,
      skillId: s.id,
      skillName: s.name,
      ...(apiKeyId ? { apiKeyId } : {}),
      ...(sessionId ? { sessionId } : {}),
      status: 'success',
      durationMs: 0,
      createdAt: this.clock.now(),
    };
    // Only whole JSON texts are stored: a cut one could not be read back.
    if (Buffer.byteLength(inputText) > MAX_IO) {
      rec.status = 'invalid_input';
      rec.error = 'input is larger than 1 MiB';
      this.store.addExecution(rec);
      return rec;
    }
    rec.input = inputText;
    const inCheck = await this.checkAgainst(s, 'input', inputText);
    if (inCheck.broken !== undefined || inCheck.problem !== undefined) {
      rec.status = inCheck.broken !== undefined ? 'error' : 'invalid_input';
      rec.error = inCheck.broken ?? inCheck.problem;
    } else {
      const out: RunOutcome = await this.pool.run(s.handlerCode, inputText, { timeoutMs: cfg.timeoutMs, memoryMb: cfg.memoryMb, maxOutputBytes: MAX_IO });
      rec.durationMs = Math.round(out.durationMs);
      if (out.ok && Buffer.byteLength(out.output) <= MAX_IO) {
        rec.output = out.output;
        const outCheck = await this.checkAgainst(s, 'output', out.output);
        if (outCheck.broken !== undefined || outCheck.problem !== undefined) {
          rec.status = outCheck.broken !== undefined ? 'error' : 'invalid_output';
          rec.error = outCheck.broken ?? outCheck.problem;
        }
      } else if (out.ok || out.kind === 'too_large') {
        // Not kept: the execution is recorded as an invalid output without it.
        rec.status = 'invalid_output';
        rec.error = out.ok ? 'the output is larger than 1 MiB; it was dropped' : out.error;
        rec.outputTooLarge = true;
      } else {
        rec.status = out.kind === 'output' ? 'invalid_output' : out.kind;
        rec.error = out.error;
        if (out.kind === 'timeout' || out.kind === 'memory' || out.kind === 'crashed') this.log.warn({ skill: s.name, kind: out.kind }, `gateway: skill ${s.name} stopped: ${out.error}`);
      }
    }
    this.store.addExecution(rec);
    return rec;
  }

  // ---- installing from URLs ----

  private async fetchJson(url: string, what: string, apiKey?: string): Promise<unknown> {
    let res;
    try {
      res = await fetchUserUrl(this.egress, url, { allowHttp: true, timeoutMs: 10_000, headers: { accept: 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) } });
    } catch (e) {
      if (e instanceof UrlRefusedError) throw new GatewayError('invalid', `${what}: ${e.message}`, { code: 'url_refused' });
      throw new GatewayError('remote', `${what}: ${(e as Error).message}`, { code: 'skill_source_failed', cause: e });
    }
    const text = await readBounded(res.body, MAX_MANIFEST_BYTES).catch((e: unknown) => {
      throw new GatewayError('remote', `${what}: ${(e as Error).message}`, { code: 'skill_source_failed', cause: e });
    });
    if (res.status < 200 || res.status >= 300) throw new GatewayError('remote', `${what} answered HTTP ${res.status}`, { code: 'skill_source_failed' });
    try {
      return JSON.parse(text);
    } catch {
      throw new GatewayError('remote', `${what} is not JSON`, { code: 'skill_source_failed' });
    }
  }

  fetchManifest(url: string, apiKey?: string): Promise<unknown> {
    return this.fetchJson(url, `manifest ${url}`, apiKey);
  }

  /** Search an index (registry or marketplace): name or description containing q. */
  async searchIndex(which: 'registry' | 'marketplace', q: string, limit: number): Promise<IndexEntry[]> {
    const idx = this.indexConfig(which);
    const doc = await this.fetchJson(idx.url, `${which} ${idx.url}`, idx.apiKey);
    const list = (doc as { skills?: unknown }).skills;
    if (!Array.isArray(list)) throw new GatewayError('remote', `${which} index has no skills array`, { code: 'skill_source_failed' });
    const needle = q.toLowerCase();
    const out: IndexEntry[] = [];
    for (const e of list as Record<string, unknown>[]) {
      if (typeof e?.name !== 'string' || typeof e.url !== 'string') continue;
      const entry = { name: e.name, version: String(e.version ?? ''), description: String(e.description ?? ''), url: new URL(e.url, idx.url).href };
      if (!needle || entry.name.toLowerCase().includes(needle) || entry.description.toLowerCase().includes(needle)) out.push(entry);
      if (out.length >= limit) break;
    }
    return out;
  }

  async installFromIndex(which: 'registry' | 'marketplace', name: string, version?: string): Promise<{ skill: SkillRecord; replaced: boolean }> {
    const found = (await this.searchIndex(which, '', 10_000)).filter((e) => e.name === name && (version === undefined || e.version === version));
    if (found.length === 0) throw new GatewayError('not-found', `${which} has no skill ${name}${version ? ` ${version}` : ''}`, { code: 'skill_not_found' });
    const idx = this.indexConfig(which);
    return await this.install(await this.fetchManifest(found[found.length - 1]!.url, idx.apiKey), which);
  }

  indexConfig(which: 'registry' | 'marketplace'): { url: string; apiKey?: string } {
    const idx = this.config()[which];
    if (!idx) throw new GatewayError('not-configured', `no skill ${which} is configured (gateway.yaml skills.${which}.url)`, { code: `${which}_not_configured` });
    if (which === 'marketplace' && !idx.apiKey) throw new GatewayError('not-configured', 'the skill marketplace needs an API key (gateway.yaml skills.marketplace.api_key or api_key_env)', { code: 'marketplace_not_configured' });
    return idx;
  }

  close(): void {
    this.pool.close();
    this.schemas.close();
  }
}
