import Database from 'better-sqlite3';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * One daemon per state dir. The lock is an SQLite file opened with `locking_mode = EXCLUSIVE` inside
 * an open exclusive transaction: the operating system's file lock, held while the process lives and
 * released by the kernel when it dies (kill -9 included), so a stale lock can never block a start.
 * The pid beside it is only for the message a second `ctl serve` prints.
 */
export class StateDirLock {
  private constructor(
    private readonly db: Database.Database,
    private readonly pidFile: string,
  ) {}

  /** Take the lock or throw `another ctl daemon is running on state dir DIR (pid N)`. */
  static take(dir: string): StateDirLock {
    const pidFile = join(dir, 'daemon.pid');
    const db = new Database(join(dir, 'daemon.lock'), { timeout: 0 });
    try {
      db.pragma('locking_mode = EXCLUSIVE');
      db.exec('BEGIN EXCLUSIVE');
    } catch (e) {
      db.close();
      if (!isBusy(e)) throw e;
      const pid = readPid(pidFile);
      throw new Error(`another ctl daemon is running on state dir ${dir}${pid ? ` (pid ${pid})` : ''}`);
    }
    writeFileSync(pidFile, `${process.pid}\n`, { mode: 0o644 });
    return new StateDirLock(db, pidFile);
  }

  release(): void {
    if (!this.db.open) return;
    rmSync(this.pidFile, { force: true });
    this.db.close();
  }
}

function isBusy(e: unknown): boolean {
  const code = (e as { code?: string }).code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED';
}

function readPid(path: string): number | undefined {
  try {
    const n = Number(readFileSync(path, 'utf8').trim());
    return Number.isInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}
