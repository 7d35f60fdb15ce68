/**
 * What the memory routes and injection need from storage (store.ts, on the daemon's SQLite file or
 * the PostgreSQL database several gateways share). Callers await every answer except `any()` and `reaches()`,
 * which answer from memory (the chat path asks it on every request).
 */
import type { MemoryCaller, MemoryStore } from './store.js';

/** Each method's answer now or later (a store in a test may answer at once). */
type NowOrLater<T> = { [K in keyof T]: T[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => R | Promise<R> : T[K] };

export type MemoryData = NowOrLater<Omit<MemoryStore, 'any' | 'reaches'>> & {
  /** Whether any memory may exist (false only when none does): chat requests skip the lookup otherwise. */
  any(): boolean;
  /** Whether a memory may reach this caller, answered from memory (absent: the lookup finds out). */
  reaches?(c: MemoryCaller): boolean;
};
