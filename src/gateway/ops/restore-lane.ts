/**
 * The heavy steps of a restore or an import, on a worker thread of their own so that a database of
 * hundreds of megabytes never holds the event loop (the other APIs keep answering):
 *
 * - `prepare`: on a staged copy of the candidate (never the file the caller gave), the integrity
 *   check, the schema version (1 to this build's newest), this build's migrations from that version
 *   on, and a comparison with the schema those migrations make from nothing: every table and column
 *   the gateway uses must be there, and its views and triggers become exactly this build's (others
 *   are dropped). What fails is answered as a reason; nothing is swapped.
 * - `carryAudit`: the audit log is the gateway's own history, not restorable data: the live
 *   database's whole trail (the restore request itself included) replaces the candidate's.
 */
import { createRequire } from 'node:module';
import { WorkerLane } from '../../http/worker-lane.js';

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.sqlite);

function columns(db, schema) {
  const out = new Map();
  for (const { name } of db.prepare("SELECT name FROM " + schema + ".sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all()) {
    out.set(name, new Set(db.prepare('SELECT name FROM pragma_table_info(?, ?)').all(name, schema).map((c) => c.name)));
  }
  return out;
}

function definitions(db, type) {
  return new Map(db.prepare("SELECT name, sql FROM main.sqlite_master WHERE type = ? AND sql IS NOT NULL").all(type).map((r) => [r.name, r.sql]));
}

function prepare({ path, migrations }) {
  let db;
  try {
    db = new Database(path, { fileMustExist: true });
  } catch (e) {
    return { reason: 'not an SQLite database: ' + e.message };
  }
  try {
    let ok;
    try {
      ok = db.pragma('integrity_check', { simple: true });
    } catch (e) {
      return { reason: 'not a readable SQLite database: ' + e.message };
    }
    if (ok !== 'ok') return { reason: 'the database fails its integrity check: ' + String(ok) };
    const version = db.pragma('user_version', { simple: true });
    if (version < 1 || version > migrations.length) return { reason: 'schema version ' + version + ' is not one this build knows (1 to ' + migrations.length + ')' };
    for (let v = version + 1; v <= migrations.length; v++) {
      try {
        db.transaction(() => {
          db.exec(migrations[v - 1]);
          db.pragma('user_version = ' + v);
        })();
      } catch (e) {
        return { reason: 'not a gateway database of schema version ' + version + ' that this build can bring to ' + migrations.length + ': migration ' + v + ' fails (' + e.message + ')' };
      }
    }
    const want = new Database(':memory:');
    try {
      for (const sql of migrations) want.exec(sql);
      const have = columns(db, 'main');
      const missing = [];
      for (const [table, cols] of columns(want, 'main')) {
        const got = have.get(table);
        if (!got) missing.push('table ' + table);
        else for (const c of cols) if (!got.has(c)) missing.push(table + '.' + c);
        if (missing.length >= 5) break;
      }
      if (missing.length) return { reason: 'not a gateway database of schema version ' + version + ' (missing ' + missing.join(', ') + ')' };
      // Views and triggers are code that runs on the gateway's data (a trigger could empty the audit
      // log at every entry, or drop its append-only guard): only this build's are kept, as it makes them.
      try {
        for (const type of ['view', 'trigger']) {
          const mine = definitions(want, type);
          const theirs = definitions(db, type);
          db.transaction(() => {
            for (const [name, sql] of theirs) if (mine.get(name) !== sql) db.exec('DROP ' + type.toUpperCase() + ' IF EXISTS main."' + name.replace(/"/g, '""') + '"');
            for (const [name, sql] of mine) if (theirs.get(name) !== sql) db.exec(sql);
          })();
        }
      } catch (e) {
        return { reason: 'not a gateway database of schema version ' + version + ' (its views and triggers cannot be replaced: ' + e.message + ')' };
      }
    } finally {
      want.close();
    }
    return { version };
  } finally {
    db.close();
  }
}

function carryAudit({ path, live }) {
  const db = new Database(path, { fileMustExist: true });
  try {
    db.prepare('ATTACH DATABASE ? AS live').run(live);
    const cols = db.prepare("SELECT name FROM pragma_table_info('audit_log', 'live')").all().map((c) => '"' + c.name + '"');
    if (cols.length === 0) return {};
    const triggers = db.prepare("SELECT name, sql FROM main.sqlite_master WHERE type = 'trigger' AND tbl_name = 'audit_log'").all();
    db.transaction(() => {
      for (const t of triggers) db.exec('DROP TRIGGER main."' + t.name + '"');
      db.exec('DELETE FROM main.audit_log');
      db.exec('INSERT INTO main.audit_log (' + cols.join(', ') + ') SELECT ' + cols.join(', ') + ' FROM live.audit_log ORDER BY id');
      for (const t of triggers) db.exec(t.sql);
    })();
    db.exec('DETACH DATABASE live');
    return {};
  } finally {
    db.close();
  }
}

parentPort.on('message', (m) => {
  try {
    parentPort.postMessage({ id: m.id, result: m.op === 'prepare' ? prepare(m) : carryAudit(m) });
  } catch (e) {
    parentPort.postMessage({ id: m.id, error: String((e && e.message) || e) });
  }
});`;

/** The restore thread: started for a job, ended right after it (restores are rare; nothing is kept warm). */
const lane = new WorkerLane<Record<string, unknown>, Record<string, unknown>>({
  name: 'restore',
  program: () => ({ source: WORKER_SOURCE, workerData: { sqlite: createRequire(import.meta.url).resolve('better-sqlite3') } }),
  idleMs: 0,
});

function onWorker<T>(message: Record<string, unknown>): Promise<T> {
  return lane.run(message) as Promise<T>;
}

/** Check and migrate a staged candidate in place: its original schema version, or why it cannot be used. */
export function prepareCandidate(path: string, migrations: readonly string[]): Promise<{ version?: number; reason?: string }> {
  return onWorker({ op: 'prepare', path, migrations });
}

/** Replace the candidate's audit trail with the live database's (both at this build's schema version). */
export async function carryAuditLog(path: string, live: string): Promise<void> {
  await onWorker({ op: 'carry', path, live });
}
