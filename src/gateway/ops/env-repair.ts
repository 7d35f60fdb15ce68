/**
 * POST /api/system/env/repair: check the environment the gateway runs in and fix what can be fixed
 * on the spot — the state directory's layout and modes, credential files readable by others, temporary
 * files left by interrupted exports and writes (moved aside into DIR/backups/env-repair-<time>, the
 * seed's `backupPath`) — and report what only the operator can fix: variables gateway.yaml names that
 * are not set (for one `provider`, or all), and environment values the gateway cannot read. `dryRun`
 * reports without changing anything.
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

export interface RepairCheck {
  check: string;
  /** `would-repair`: what a run without dryRun fixes; `problem`: only the operator can fix it. */
  status: 'ok' | 'repaired' | 'would-repair' | 'problem';
  detail: string;
}

const BOOL = /^(1|0|true|false|yes|no|on|off)$/i;

/** Variables gateway.yaml names (`api_key_env`, `key_env`), with where. */
function envReferences(yamlText: string | undefined): { name: string; where: string }[] {
  if (yamlText === undefined) return [];
  let doc: unknown;
  try {
    doc = parse(yamlText);
  } catch {
    return [];
  }
  const out: { name: string; where: string }[] = [];
  const d = (doc ?? {}) as { providers?: { id?: string; api_key_env?: unknown; accounts?: { name?: string; api_key_env?: unknown }[] }[]; keys?: { name?: string; key_env?: unknown }[] };
  for (const p of Array.isArray(d.providers) ? d.providers : []) {
    if (typeof p?.api_key_env === 'string') out.push({ name: p.api_key_env, where: `provider ${p.id}` });
    for (const a of Array.isArray(p?.accounts) ? p.accounts : []) if (typeof a?.api_key_env === 'string') out.push({ name: a.api_key_env, where: `provider ${p.id} account ${a.name ?? '?'}` });
  }
  for (const k of Array.isArray(d.keys) ? d.keys : []) if (typeof k?.key_env === 'string') out.push({ name: k.key_env, where: `key ${k.name}` });
  return out;
}

export interface RepairOutcome {
  checks: RepairCheck[];
  /** Where what the repair moved aside went (null: nothing was). */
  backupPath: string | null;
}

export function repairEnvironment(o: { stateDir: string; env: NodeJS.ProcessEnv; gatewayYaml?: string; provider?: string; dryRun: boolean; now: number }): RepairOutcome {
  const checks: RepairCheck[] = [];
  let backupPath: string | null = null;
  const fix = (check: string, broken: boolean, what: string, apply: () => void) => {
    if (!broken) return;
    if (!o.dryRun) apply();
    checks.push({ check, status: o.dryRun ? 'would-repair' : 'repaired', detail: what });
  };
  const mode = (p: string) => statSync(p).mode & 0o777;

  // The state directory and its sub-directories: present, owner-only.
  const before = checks.length;
  fix('state-dir', mode(o.stateDir) !== 0o700, `${o.stateDir} set to mode 0700 (was 0${mode(o.stateDir).toString(8)})`, () => chmodSync(o.stateDir, 0o700));
  // `secrets` and `backups` are made when first needed: checked only when present.
  for (const sub of ['database', 'certificates', 'uploads', 'secrets', 'backups', join('backups', 'gateway')]) {
    const p = join(o.stateDir, sub);
    if (!existsSync(p)) {
      if (sub === 'database' || sub === 'certificates' || sub === 'uploads') fix('directories', true, `created ${p} (mode 0700)`, () => mkdirSync(p, { recursive: true, mode: 0o700 }));
    } else fix('directories', mode(p) !== 0o700, `${p} set to mode 0700 (was 0${mode(p).toString(8)})`, () => chmodSync(p, 0o700));
  }
  if (checks.length === before) checks.push({ check: 'directories', status: 'ok', detail: 'the state directory and its sub-directories exist, owner-only' });

  // Files that hold credentials or data: owner-only.
  const sensitive: string[] = [];
  for (const sub of ['database', 'secrets', join('backups', 'gateway')]) {
    const d = join(o.stateDir, sub);
    if (existsSync(d)) for (const f of readdirSync(d)) if (statSync(join(d, f)).isFile()) sensitive.push(join(d, f));
  }
  // Configuration files may hold credentials (daemon.yaml holds only addresses and names).
  for (const f of readdirSync(o.stateDir)) if (/\.ya?ml$/.test(f) && f !== 'daemon.yaml' && statSync(join(o.stateDir, f)).isFile()) sensitive.push(join(o.stateDir, f));
  const certs = join(o.stateDir, 'certificates');
  if (existsSync(certs)) for (const f of readdirSync(certs).filter((x) => /\.key$/.test(x))) sensitive.push(join(certs, f));
  const open = sensitive.filter((p) => (mode(p) & 0o077) !== 0);
  for (const p of open) fix('file-modes', true, `${p} set to mode 0600 (was 0${mode(p).toString(8)})`, () => chmodSync(p, 0o600));
  if (open.length === 0) checks.push({ check: 'file-modes', status: 'ok', detail: `${sensitive.length} data and credential files are owner-only` });

  // Leftovers of interrupted exports and atomic writes: an atomic write takes milliseconds, so a .tmp
  // file a minute old is abandoned; an export may stream for a long time, so its folder gets an hour.
  const stale = readdirSync(o.stateDir)
    .filter((f) => /^\.export-|^\..+\.tmp$/.test(f))
    .map((f) => join(o.stateDir, f))
    .filter((p) => o.now - statSync(p).mtimeMs > (p.includes('/.export-') ? 3_600_000 : 60_000));
  for (const p of stale) {
    const aside = join(o.stateDir, 'backups', `env-repair-${new Date(o.now).toISOString().replace(/[:.]/g, '-')}`);
    fix('temporary-files', true, `moved ${p} to ${aside}`, () => {
      mkdirSync(aside, { recursive: true, mode: 0o700 });
      renameSync(p, join(aside, p.slice(o.stateDir.length + 1)));
      backupPath = aside;
    });
  }
  if (stale.length === 0) checks.push({ check: 'temporary-files', status: 'ok', detail: 'no leftovers of interrupted writes' });

  // What only the operator can fix: the daemon's environment.
  const missing = envReferences(o.gatewayYaml).filter((r) => !o.env[r.name] && (o.provider === undefined || r.where === `provider ${o.provider}` || r.where.startsWith(`provider ${o.provider} `)));
  for (const r of missing) checks.push({ check: 'env-references', status: 'problem', detail: `${r.where} names ${r.name}, which is not set: set it in the daemon's environment (systemd Environment= or EnvironmentFile=) and restart` });
  if (missing.length === 0) checks.push({ check: 'env-references', status: 'ok', detail: 'every variable gateway.yaml names is set' });
  const bad = ['REQUIRE_API_KEY'].filter((n) => o.env[n] !== undefined && o.env[n] !== '' && !BOOL.test(o.env[n]!));
  for (const n of bad) checks.push({ check: 'env-values', status: 'problem', detail: `${n}=${JSON.stringify(o.env[n])} is not a boolean (true/false, 1/0, yes/no, on/off)` });
  if (bad.length === 0) checks.push({ check: 'env-values', status: 'ok', detail: 'environment values are readable' });
  return { checks, backupPath };
}
