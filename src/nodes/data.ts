/**
 * What the node monitor's methods, poller and jobs need from storage: the store (store.ts) on the
 * daemon's own SQLite file or on the PostgreSQL database of several daemons. Callers await every
 * answer (SQLite's come at once).
 */
import type { NodesStore } from './store.js';

export type NodesData = Pick<NodesStore, keyof NodesStore>;
