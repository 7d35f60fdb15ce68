/**
 * Owner of the current configuration: the database, the parsed gateway.yaml and the merged Catalog.
 * Management writes go to the database and then call `rebuild(change)`; SIGHUP calls `reloadFile()`.
 */
import { join } from 'node:path';
import type { Clock } from '../http/clock.js';
import { Catalog, type CatalogChange } from './catalog.js';
import { emptyFileConfig, loadConfigFile, type GatewayFileConfig } from './config-file.js';
import type { GatewayStore } from './store.js';

export class GatewayState {
  private file: GatewayFileConfig = emptyFileConfig();
  private current: Catalog;
  readonly filePath: string;
  private readonly listeners: (() => void)[] = [];

  constructor(
    readonly db: GatewayStore,
    readonly stateDir: string,
    /** The environment gateway.yaml is read with (the daemon's, plus ctl.yaml gateway fallbacks). */
    readonly env: NodeJS.ProcessEnv,
    private readonly clock: Clock,
  ) {
    this.filePath = join(stateDir, 'gateway.yaml');
    this.file = loadConfigFile(this.filePath, env, clock.now());
    this.current = new Catalog(db, this.file);
  }

  get catalog(): Catalog {
    return this.current;
  }

  get fileConfig(): GatewayFileConfig {
    return this.file;
  }

  /** Re-read gateway.yaml; throws (keeping the old configuration) when the file is bad. */
  reloadFile(): void {
    const next = loadConfigFile(this.filePath, this.env, this.clock.now());
    const catalog = new Catalog(this.db, next);
    this.file = next;
    this.swap(catalog);
  }

  /** Update the catalog after a database change: only what `change` names is read again. */
  rebuild(change: CatalogChange): void {
    this.swap(new Catalog(this.db, this.file, this.current, change));
  }

  /**
   * `rebuild`, then wait until the change is durable (with shared storage: committed to PostgreSQL;
   * a failed commit rejects with 503). Management routes await this before they answer.
   */
  async commit(change: CatalogChange): Promise<void> {
    this.rebuild(change);
    await this.db.settled();
  }

  /** Called after every rebuild (routing metrics prune targets, caches reset). */
  onChange(fn: () => void): void {
    this.listeners.push(fn);
  }

  private swap(c: Catalog): void {
    this.current = c;
    for (const fn of this.listeners) fn();
  }
}
