/**
 * What the memory routes and injection need from storage: the daemon's SQLite file (store.ts,
 * synchronous, FTS5) or the PostgreSQL database several gateways share (shared/memory-store.ts).
 * Callers await every answer except `any()`, which both answer from memory (the chat path asks it
 * on every request).
 */
import type { MemoryStore } from './store.js';

type Awaitable<F> = F extends (...args: infer A) => infer R ? (...args: A) => R | Promise<R> : never;

export type MemoryData = { [K in Exclude<keyof MemoryStore, 'store' | 'any'>]: Awaitable<MemoryStore[K]> } & {
  /** Whether any memory may exist (false only when none does): chat requests skip the lookup otherwise. */
  any(): boolean;
};
