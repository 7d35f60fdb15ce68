/**
 * What the node monitor's methods, poller and jobs need from storage. The daemon's own SQLite file
 * (store.ts, synchronous) and the PostgreSQL database of several daemons (shared/pg-store.ts) both
 * provide it; callers await every answer, so either fits.
 */
import type { AwaitableMethods } from '../store/awaitable.js';
import type { NodesStore } from './store.js';

/** Every method of the SQLite store, answered now or later. */
export type NodesData = AwaitableMethods<NodesStore, 'store'> & {
  /**
   * Calls `fn` when another daemon changed what getmynodes answers: `accounts` whose node lists
   * changed, or every account (`undefined`) after new poll results. Nothing to do on one daemon.
   */
  onRemoteChange?(fn: (accounts: number[] | undefined) => void): void;
};
