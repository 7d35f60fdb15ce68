/**
 * The gateway's SQLite schema (`database/gateway.db`). Each capability declares its tables beside
 * its queries, as numbered steps (`<capability>_SCHEMA`); this list places them. A version is one
 * transaction and `PRAGMA user_version` records the last applied (store/index.ts), so the numbers
 * already released never change: a new table or column is a step with the next number, in the
 * schema of the capability that queries it. Within one version, steps run in the order of this list.
 * The PostgreSQL schema (ctl.yaml storage.postgres: what several daemons share) is assembled the same
 * way from each capability's `<capability>_PG_SCHEMA` beside its queries (gatewayPgMigrations);
 * db.migrate records its version per component ('gateway').
 */
import type { Migration } from '../store/index.js';
import type { PgMigration } from '../store/postgres.js';
import { CONFIG_SCHEMA } from './config/store.js';
import { CONFIG_PG_SCHEMA } from './config/pg-store.js';
import { SESSIONS_SCHEMA } from './sessions/store.js';
import { REQUEST_LOG_SCHEMA, REQUEST_LOG_PG_SCHEMA } from './request-log/store.js';
import { RESILIENCE_SCHEMA } from './resilience/persist.js';
import { RESPONSE_CACHE_SCHEMA } from './cache/response-cache.js';
import { LIMITS_SCHEMA } from './limits/store.js';
import { FILES_SCHEMA, FILES_PG_SCHEMA } from './files/store.js';
import { BATCHES_SCHEMA, BATCHES_PG_SCHEMA } from './batches/store.js';
import { WEBHOOKS_SCHEMA, WEBHOOK_QUEUE_PG_SCHEMA } from './webhooks/store.js';
import { MEMORY_SCHEMA, MEMORY_PG_SCHEMA } from './memory/store.js';
import { SKILLS_SCHEMA } from './skills/store.js';
import { AGENT_SKILLS_SCHEMA } from './agent-skills/store.js';
import { MCP_AUDIT_SCHEMA } from './agents/mcp/audit.js';
import { A2A_SCHEMA } from './agents/a2a/store.js';
import { COMPRESSION_SCHEMA } from './compression/store.js';
import { POLICIES_SCHEMA } from './ops/policies.js';
import { AUDIT_SCHEMA } from './ops/audit.js';
import { PROXIES_SCHEMA } from './proxies/registry.js';
import { REGISTERED_KEYS_SCHEMA } from './registered-keys/service.js';
import { EVALS_SCHEMA } from './evals/store.js';
import { PLUGINS_SCHEMA } from './plugins/service.js';
import { AGENT_TASKS_SCHEMA } from './agents/tasks/service.js';
import { OAUTH_SCHEMA } from './oauth/service.js';

/** A capability's share of one numbered migration: SQL run inside that version's transaction. */
export interface SchemaStep {
  version: number;
  up: string;
}

/** Versions 1..n, each the steps of that number joined in the order given (a missing number throws). */
export function assembleMigrations(schemas: readonly (readonly SchemaStep[])[]): SchemaStep[] {
  const byVersion = new Map<number, string[]>();
  for (const schema of schemas) {
    for (const step of schema) {
      const list = byVersion.get(step.version) ?? [];
      list.push(step.up);
      byVersion.set(step.version, list);
    }
  }
  const migrations: SchemaStep[] = [];
  for (let version = 1; version <= byVersion.size; version++) {
    const parts = byVersion.get(version);
    if (!parts) throw new Error(`gateway schema: no step has version ${version} (versions must be 1..${byVersion.size})`);
    migrations.push({ version, up: parts.join('\n') });
  }
  return migrations;
}

export const GATEWAY_MIGRATIONS: Migration[] = assembleMigrations([
  CONFIG_SCHEMA,
  SESSIONS_SCHEMA,
  REQUEST_LOG_SCHEMA,
  RESILIENCE_SCHEMA,
  RESPONSE_CACHE_SCHEMA,
  LIMITS_SCHEMA,
  FILES_SCHEMA,
  BATCHES_SCHEMA,
  WEBHOOKS_SCHEMA,
  MEMORY_SCHEMA,
  SKILLS_SCHEMA,
  AGENT_SKILLS_SCHEMA,
  MCP_AUDIT_SCHEMA,
  A2A_SCHEMA,
  COMPRESSION_SCHEMA,
  POLICIES_SCHEMA,
  AUDIT_SCHEMA,
  PROXIES_SCHEMA,
  REGISTERED_KEYS_SCHEMA,
  EVALS_SCHEMA,
  PLUGINS_SCHEMA,
  AGENT_TASKS_SCHEMA,
  OAUTH_SCHEMA,
]);

/**
 * The gateway's PostgreSQL migrations, assembled as GATEWAY_MIGRATIONS is (login sessions, budgets,
 * token limits and webhooks are records of the configuration's table and have none of their own).
 * A function, not a constant: the shared configuration store (config/pg-store.ts) migrates when it
 * opens and is itself imported here, so the list is built when it is asked for, not while the
 * modules load.
 */
export function gatewayPgMigrations(): PgMigration[] {
  return assembleMigrations([CONFIG_PG_SCHEMA, REQUEST_LOG_PG_SCHEMA, MEMORY_PG_SCHEMA, FILES_PG_SCHEMA, BATCHES_PG_SCHEMA, WEBHOOK_QUEUE_PG_SCHEMA]);
}
