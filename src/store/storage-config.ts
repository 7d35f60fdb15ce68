/**
 * ctl.yaml `storage:` — where shared state lives when several daemons serve together:
 * `postgres` (a `postgres://` URL: the components' shared stores) and `redis` (a `redis://` URL:
 * shared hot counters). Both optional; without them each daemon keeps everything in its own
 * state dir (SQLite), as on one machine. `postgres_env` / `redis_env` name an environment variable
 * holding the URL instead (keeps a password out of the file).
 */
export interface StorageSettings {
  postgres?: string;
  redis?: string;
}

const KNOWN = new Set(['postgres', 'redis', 'postgres_env', 'redis_env']);

export function parseStorageSettings(raw: unknown, env: NodeJS.ProcessEnv, where = 'storage'): StorageSettings {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new Error(`${where} must be a mapping with postgres and/or redis`);
  const o = raw as Record<string, unknown>;
  for (const k of Object.keys(o)) if (!KNOWN.has(k)) throw new Error(`${where}.${k}: unknown key (postgres, redis, postgres_env, redis_env)`);
  const out: StorageSettings = {};
  const pick = (key: 'postgres' | 'redis', schemes: string[]) => {
    let value = o[key];
    const envName = o[`${key}_env`];
    if (value !== undefined && envName !== undefined) throw new Error(`${where}: give ${key} or ${key}_env, not both`);
    if (envName !== undefined) {
      if (typeof envName !== 'string' || envName === '') throw new Error(`${where}.${key}_env must name an environment variable`);
      value = env[envName];
      if (value === undefined || value === '') throw new Error(`${where}.${key}_env: environment variable ${envName} is not set`);
    }
    if (value === undefined || value === null || value === '') return;
    if (typeof value !== 'string') throw new Error(`${where}.${key} must be a URL string`);
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new Error(`${where}.${key}: not a URL`);
    }
    if (!schemes.includes(url.protocol)) throw new Error(`${where}.${key}: the URL must start with ${schemes.map((s) => `${s}//`).join(' or ')}`);
    out[key] = value;
  };
  pick('postgres', ['postgres:', 'postgresql:']);
  pick('redis', ['redis:', 'rediss:']);
  return out;
}

/** A URL without its password, for logs and error messages. */
export function redactUrl(value: string): string {
  try {
    const u = new URL(value);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '<unparsable URL>';
  }
}
