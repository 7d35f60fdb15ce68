import { mkdirSync, chmodSync, writeFileSync, renameSync, openSync, fsyncSync, closeSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, dirname, basename } from 'node:path';

/** `--state-dir`, else $CTL_STATE_DIR, else /var/lib/ctl for root, else $XDG_STATE_HOME/ctl. */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.CTL_STATE_DIR) return env.CTL_STATE_DIR;
  if (typeof process.getuid === 'function' && process.getuid() === 0) return '/var/lib/ctl';
  const base = env.XDG_STATE_HOME || join(homedir(), '.local', 'state');
  return join(base, 'ctl');
}

export interface StatePaths {
  dir: string;
  socket: string;
  daemonYaml: string;
  ctlYaml: string;
  database: string;
  certificates: string;
  uploads: string;
}

export function statePaths(dir: string): StatePaths {
  return {
    dir,
    socket: join(dir, 'control.socket'),
    daemonYaml: join(dir, 'daemon.yaml'),
    ctlYaml: join(dir, 'ctl.yaml'),
    database: join(dir, 'database'),
    certificates: join(dir, 'certificates'),
    uploads: join(dir, 'uploads'),
  };
}

/** Create the state dir (0700) and its sub-directories. */
export function ensureStateDir(dir: string): StatePaths {
  const p = statePaths(dir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  for (const sub of [p.database, p.certificates, p.uploads]) mkdirSync(sub, { recursive: true, mode: 0o700 });
  return p;
}

/**
 * Write a file atomically: temp file in the same directory, fsync, rename, fsync the directory.
 * A reader (or a crash at any point) sees the old file or the new one, never a torn one.
 */
export function writeFileAtomic(path: string, data: string, mode = 0o644): void {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${Date.now()}.tmp`);
  writeFileSync(tmp, data, { mode });
  const fd = openSync(tmp, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  try {
    const dfd = openSync(dirname(path), 'r');
    try {
      fsyncSync(dfd);
    } finally {
      closeSync(dfd);
    }
  } catch {
    /* some filesystems refuse fsync on directories */
  }
}
