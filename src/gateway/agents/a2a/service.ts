/**
 * A2A tasks: created by message/send or message/stream, run by a built-in skill, persisted with
 * their state (submitted → working → completed | failed | cancelled), cancellable while they run.
 */
import { randomUUID } from 'node:crypto';
import type { GatewayServices } from '../../services.js';
import { A2A_SKILLS, SkillFailure, type A2aSkill } from './skills.js';
import type { A2aMessage, TaskRecord, TaskScope, TaskStore } from './store.js';

export type TaskListener = (t: TaskRecord) => void;

export class A2aService {
  private readonly listeners = new Map<string, Set<TaskListener>>();

  constructor(
    readonly tasks: TaskStore,
    private readonly svc: () => GatewayServices,
    /** GATEWAY_API_KEY: the Bearer /a2a and its REST helpers require, when set. */
    readonly apiKey: string | undefined,
  ) {}

  skill(id: string): A2aSkill | undefined {
    return A2A_SKILLS.find((s) => s.id === id);
  }

  /** Create a task and start it; the returned promise settles when it has ended. */
  start(skill: A2aSkill, messages: A2aMessage[], metadata: Record<string, unknown>, owner: string | null): { task: TaskRecord; done: Promise<TaskRecord> } {
    const now = this.svc().clock.now();
    const task: TaskRecord = { id: randomUUID(), skill: skill.id, state: 'submitted', messages, artifacts: [], metadata, createdAt: now, updatedAt: now, owner };
    this.tasks.save(task);
    return { task, done: this.run(task, skill) };
  }

  private async run(task: TaskRecord, skill: A2aSkill): Promise<TaskRecord> {
    // Begin on the next tick, so whoever started the task can watch it first (message/stream).
    await null;
    const svc = this.svc();
    const working: TaskRecord = { ...task, state: 'working', updatedAt: svc.clock.now() };
    if (!this.tasks.finish(working)) return this.tasks.get(task.id)!;
    this.emit(working);
    let end: TaskRecord;
    try {
      const out = await skill.run({ svc, call: svc.internal, messages: task.messages, metadata: task.metadata });
      end = { ...working, state: 'completed', artifacts: out.artifacts, metadata: { ...task.metadata, ...out.metadata }, updatedAt: svc.clock.now() };
    } catch (e) {
      end = { ...working, state: 'failed', error: e instanceof SkillFailure ? e.message : `skill ${skill.id} failed: ${(e as Error).message}`, updatedAt: svc.clock.now() };
    }
    // A cancel that came first stands.
    if (!this.tasks.finish(end)) return this.tasks.get(task.id)!;
    this.emit(end);
    return end;
  }

  /** Cancel a task `scope` may see (undefined when it may not, or there is none). */
  cancel(id: string, scope: TaskScope = { all: true }): TaskRecord | undefined {
    const t = this.tasks.get(id, scope);
    if (!t) return undefined;
    if (t.state === 'completed' || t.state === 'failed' || t.state === 'cancelled') return t;
    const next: TaskRecord = { ...t, state: 'cancelled', updatedAt: this.svc().clock.now() };
    if (this.tasks.finish(next)) this.emit(next);
    return this.tasks.get(id);
  }

  /** Follow one task's changes (message/stream). */
  watch(id: string, fn: TaskListener): () => void {
    let set = this.listeners.get(id);
    if (!set) this.listeners.set(id, (set = new Set()));
    set.add(fn);
    return () => {
      set.delete(fn);
      if (set.size === 0) this.listeners.delete(id);
    };
  }

  private emit(t: TaskRecord): void {
    for (const fn of this.listeners.get(t.id) ?? []) fn(t);
  }
}
