/**
 * Cloud agent tasks: a prompt handed to a remote coding agent (a provider configured in ctl.yaml
 * `gateway.agent_providers`), kept here with the upstream's id, and refreshed from the upstream while
 * it is not finished. The upstream speaks a small REST contract (docs/gateway.md, "Cloud agent
 * tasks"): POST {base}/tasks, GET {base}/tasks/{id}, POST {base}/tasks/{id}/approve | /messages |
 * /cancel, JSON in and out, `Authorization: Bearer <api_key>`; every call goes through the egress layer.
 */
import { randomBytes } from 'node:crypto';
import type { Egress } from '../../../egress/index.js';
import type { Store } from '../../../store/index.js';
import { ApiFailure, callJsonApi } from '../../providers/api-call.js';
import type { SchemaStep } from '../../schema.js';
import { GatewayError } from '../../errors.js';

/** Cloud agent tasks: this capability's share of the gateway's SQLite migrations (placed by version in gateway/schema.ts). */
export const AGENT_TASKS_SCHEMA: SchemaStep[] = [
  {
    // Tasks sent to cloud agent providers (/api/v1/agents/tasks).
    version: 16,
    up: `
CREATE TABLE agent_tasks (
  id TEXT PRIMARY KEY,
  provider_id TEXT NOT NULL,
  external_id TEXT,
  status TEXT NOT NULL,
  prompt TEXT NOT NULL,
  source TEXT,
  options TEXT,
  result TEXT,
  url TEXT,
  error TEXT,
  messages TEXT NOT NULL DEFAULT '[]',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX agent_tasks_created ON agent_tasks(created_at);
`,
  },
];

export interface AgentProvider {
  id: string;
  name: string;
  baseUrl: string;
  apiKey: string;
}

export const TASK_STATUSES = ['queued', 'running', 'awaiting_approval', 'completed', 'failed', 'cancelled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
const FINISHED = new Set<TaskStatus>(['completed', 'failed', 'cancelled']);

export interface AgentTask {
  id: string;
  providerId: string;
  externalId: string | null;
  status: TaskStatus;
  prompt: string;
  source: unknown;
  options: unknown;
  result: unknown;
  url: string | null;
  error: string | null;
  messages: { role: 'user' | 'agent'; text: string; at: string }[];
  createdAt: number;
  updatedAt: number;
}

const row = (r: Record<string, unknown>): AgentTask => ({
  id: r.id as string,
  providerId: r.provider_id as string,
  externalId: r.external_id as string | null,
  status: r.status as TaskStatus,
  prompt: r.prompt as string,
  source: r.source ? (JSON.parse(r.source as string) as unknown) : null,
  options: r.options ? (JSON.parse(r.options as string) as unknown) : null,
  result: r.result ? (JSON.parse(r.result as string) as unknown) : null,
  url: r.url as string | null,
  error: r.error as string | null,
  messages: JSON.parse(r.messages as string) as AgentTask['messages'],
  createdAt: r.created_at as number,
  updatedAt: r.updated_at as number,
});

/** An upstream status word in our vocabulary (unknown words count as running). */
function statusOf(v: unknown): TaskStatus {
  const s = typeof v === 'string' ? v.toLowerCase().replace(/[\s-]/g, '_') : '';
  if ((TASK_STATUSES as readonly string[]).includes(s)) return s as TaskStatus;
  if (['pending', 'created', 'submitted'].includes(s)) return 'queued';
  if (['in_progress', 'working', 'planning'].includes(s)) return 'running';
  if (['needs_approval', 'awaiting_user', 'waiting'].includes(s)) return 'awaiting_approval';
  if (['succeeded', 'done', 'success', 'finished'].includes(s)) return 'completed';
  if (['error', 'errored'].includes(s)) return 'failed';
  if (['canceled', 'stopped'].includes(s)) return 'cancelled';
  return 'running';
}

export class AgentTasks {
  constructor(
    private readonly store: Store,
    private readonly providers: () => AgentProvider[],
    private readonly egress: Egress,
    private readonly now: () => number,
  ) {}

  private provider(id: string): AgentProvider {
    const p = this.providers().find((x) => x.id === id);
    if (!p) throw new GatewayError('invalid', `no cloud agent provider ${JSON.stringify(id)} (ctl.yaml gateway.agent_providers${this.providers().length ? `: ${this.providers().map((x) => x.id).join(', ')}` : ' is empty'})`);
    return p;
  }

  private upstream(p: AgentProvider, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Record<string, unknown>> {
    return callJsonApi(this.egress, { method, url: `${p.baseUrl}${path}`, headers: { authorization: `Bearer ${p.apiKey}` }, ...(body !== undefined ? { body } : {}), timeoutMs: 30_000, what: `cloud agent provider ${p.id}` }) as Promise<Record<string, unknown>>;
  }

  private save(t: AgentTask): void {
    this.store
      .prepare(
        `INSERT INTO agent_tasks (id, provider_id, external_id, status, prompt, source, options, result, url, error, messages, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET external_id = excluded.external_id, status = excluded.status, result = excluded.result, url = excluded.url, error = excluded.error, messages = excluded.messages, updated_at = excluded.updated_at`,
      )
      .run(t.id, t.providerId, t.externalId, t.status, t.prompt, t.source === null ? null : JSON.stringify(t.source), t.options === null ? null : JSON.stringify(t.options), t.result === null ? null : JSON.stringify(t.result), t.url, t.error, JSON.stringify(t.messages), t.createdAt, t.updatedAt);
  }

  get(id: string): AgentTask {
    const r = this.store.prepare('SELECT * FROM agent_tasks WHERE id = ?').get(id) as Record<string, unknown> | undefined;
    if (!r) throw new GatewayError('not-found', `agent task ${id} not found`);
    return row(r);
  }

  list(filter: { provider?: string; status?: string }, limit: number): AgentTask[] {
    const where: string[] = [];
    const args: (string | number)[] = [];
    if (filter.provider) (where.push('provider_id = ?'), args.push(filter.provider));
    if (filter.status) (where.push('status = ?'), args.push(filter.status));
    args.push(limit);
    return (this.store.prepare(`SELECT * FROM agent_tasks${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id LIMIT ?`).all(...args) as Record<string, unknown>[]).map(row);
  }

  /** Hand a prompt to the provider; the task is kept even when the upstream refuses (status failed). */
  async create(providerId: string, prompt: string, source: unknown, options: unknown): Promise<{ task: AgentTask; failure?: GatewayError }> {
    const p = this.provider(providerId);
    const t0 = this.now();
    const task: AgentTask = { id: `task_${randomBytes(8).toString('hex')}`, providerId, externalId: null, status: 'queued', prompt, source: source ?? null, options: options ?? null, result: null, url: null, error: null, messages: [], createdAt: t0, updatedAt: t0 };
    try {
      const up = await this.upstream(p, 'POST', '/tasks', { prompt, ...(source !== undefined ? { source } : {}), ...(options !== undefined ? { options } : {}) });
      if (typeof up.id !== 'string' && typeof up.id !== 'number') throw new ApiFailure(502, 'the provider answered without a task id');
      task.externalId = String(up.id);
      this.absorb(task, up);
      this.save(task);
      return { task };
    } catch (e) {
      const f = e instanceof ApiFailure ? e : new ApiFailure(0, (e as Error).message);
      task.status = 'failed';
      task.error = f.message;
      this.save(task);
      return { task, failure: new GatewayError('remote', `cloud agent provider ${p.id}: ${f.message}`, { code: 'agent_provider_failed' }) };
    }
  }

  private absorb(t: AgentTask, up: Record<string, unknown>): void {
    if (up.status !== undefined) t.status = statusOf(up.status);
    if (up.result !== undefined) t.result = up.result;
    if (typeof up.url === 'string') t.url = up.url;
    if (typeof up.error === 'string') t.error = up.error;
    t.updatedAt = this.now();
  }

  /** The task, its status refreshed from the upstream first while it is not finished. */
  async refreshed(id: string): Promise<AgentTask & { refreshError?: string }> {
    const t = this.get(id);
    if (!t.externalId || FINISHED.has(t.status)) return t;
    try {
      const p = this.provider(t.providerId);
      this.absorb(t, await this.upstream(p, 'GET', `/tasks/${encodeURIComponent(t.externalId)}`));
      this.save(t);
      return t;
    } catch (e) {
      return { ...t, refreshError: (e as Error).message };
    }
  }

  async act(id: string, action: 'approve' | 'message' | 'cancel', message?: string): Promise<AgentTask> {
    const t = this.get(id);
    if (!t.externalId) throw new GatewayError('conflict', `task ${id} never reached its provider (${t.error ?? 'no upstream id'})`, { code: 'task_not_started' });
    if (FINISHED.has(t.status)) throw new GatewayError('conflict', `task ${id} is ${t.status}`, { code: 'task_finished' });
    if (action === 'approve' && t.status !== 'awaiting_approval') throw new GatewayError('conflict', `task ${id} is ${t.status}, not awaiting approval`, { code: 'task_not_awaiting_approval' });
    const p = this.provider(t.providerId);
    const path = `/tasks/${encodeURIComponent(t.externalId)}/${action === 'message' ? 'messages' : action}`;
    let up: Record<string, unknown>;
    try {
      up = await this.upstream(p, 'POST', path, action === 'message' ? { message } : {});
    } catch (e) {
      throw new GatewayError('remote', `cloud agent provider ${p.id}: ${(e as Error).message}`, { code: 'agent_provider_failed' });
    }
    if (action === 'message') t.messages.push({ role: 'user', text: message!, at: new Date(this.now()).toISOString() });
    if (action === 'cancel' && up.status === undefined) up.status = 'cancelled';
    if (action === 'approve' && up.status === undefined) up.status = 'running';
    this.absorb(t, up);
    this.save(t);
    return t;
  }

  /** Forget a task; one still running is cancelled upstream first (best effort). */
  async remove(id: string): Promise<{ cancelledUpstream: boolean }> {
    const t = this.get(id);
    let cancelled = false;
    if (t.externalId && !FINISHED.has(t.status)) {
      try {
        await this.upstream(this.provider(t.providerId), 'POST', `/tasks/${encodeURIComponent(t.externalId)}/cancel`, {});
        cancelled = true;
      } catch {
        cancelled = false;
      }
    }
    this.store.prepare('DELETE FROM agent_tasks WHERE id = ?').run(id);
    return { cancelledUpstream: cancelled };
  }
}

/** ctl.yaml `gateway.agent_providers`: cloud agent providers `[{id, name?, base_url, api_key | api_key_env}]`. */
export function agentProvidersOf(config: Record<string, unknown>, env: NodeJS.ProcessEnv): AgentProvider[] {
  const list = config.agent_providers;
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new Error('ctl.yaml gateway.agent_providers must be a list');
  const seen = new Set<string>();
  return list.map((raw, i) => {
    const where = `ctl.yaml gateway.agent_providers[${i}]`;
    if (typeof raw !== 'object' || raw === null) throw new Error(`${where} must be a mapping`);
    const o = raw as Record<string, unknown>;
    for (const k of Object.keys(o)) if (!['id', 'name', 'base_url', 'api_key', 'api_key_env'].includes(k)) throw new Error(`${where}: unknown field ${k}`);
    if (typeof o.id !== 'string' || !/^[a-z0-9][a-z0-9_-]{0,63}$/.test(o.id)) throw new Error(`${where}.id must be lower-case letters, digits, - and _`);
    if (seen.has(o.id)) throw new Error(`${where}: duplicate id ${o.id}`);
    seen.add(o.id);
    if (typeof o.base_url !== 'string' || !/^https?:\/\/[^/]/.test(o.base_url)) throw new Error(`${where}.base_url must be an http(s) URL`);
    const key = typeof o.api_key === 'string' ? o.api_key : typeof o.api_key_env === 'string' ? env[o.api_key_env] : undefined;
    if (!key) throw new Error(`${where} needs api_key (or api_key_env naming a set variable)`);
    return { id: o.id, name: typeof o.name === 'string' ? o.name : o.id, baseUrl: o.base_url.replace(/\/+$/, ''), apiKey: key };
  });
}
