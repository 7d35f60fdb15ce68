/**
 * What the memory routes and injection need from storage: the daemon's SQLite file (store.ts,
 * synchronous, FTS5) or the PostgreSQL database several gateways share (pg-store.ts).
 * Callers await every answer except `any()`, which both answer from memory (the chat path asks it
 * on every request).
 */
import type { AwaitableMethods } from '../../store/awaitable.js';
import type { MemoryCaller, MemoryStore } from './store.js';

export type MemoryData = AwaitableMethods<MemoryStore, 'store' | 'any' | 'reaches'> & {
  /** Whether any memory may exist (false only when none does): chat requests skip the lookup otherwise. */
  any(): boolean;
  /** Whether a memory may reach this caller, answered from memory (absent: the lookup finds out). */
  reaches?(c: MemoryCaller): boolean;
};
