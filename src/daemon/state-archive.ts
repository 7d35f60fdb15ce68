/**
 * An archive of the daemon's state (GET /api/db-backups/exportAll): every component database, copied
 * with SQLite's online backup through the connection that has it open (so a copy taken under load is
 * consistent, and files a component holds locked are included), the configuration files, certificates,
 * and a manifest.json; a gzipped tar, streamed.
 *
 * Without `secrets`: columns holding credentials (provider API keys, webhook secrets, proxy passwords,
 * key and session hashes) are overwritten in the copies, secret-looking YAML values and URL passwords
 * are replaced by `<redacted>`, and DIR/secrets and private keys are left out.
 */
import { createReadStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { basename, join, relative, resolve, sep } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import Database from 'better-sqlite3';
import { pack as tarPack } from 'tar-stream';
import { isPair, isScalar, isSeq, parseDocument, visit } from 'yaml';
import { openStores } from '../store/index.js';

export interface StateArchiveOptions {
  dir: string;
  /** --config FILE when it lives outside the state dir. */
  configPath?: string;
  secrets: boolean;
  version: string;
  now: number;
}

/** Column names that hold credentials, in any component's tables. */
const SECRET_COLUMN = /^(api_key|secret|password|key_hash|token_hash|private_key|access_token|refresh_token)$/i;
/** YAML keys whose values are credentials. */
const SECRET_YAML_KEY = /^(key|api_keys?|password|secret|token|credentials?)$|[_-](key|keys|password|secret|token)$/i;
const URL_PASSWORD = /(\b[a-z][a-z0-9+.-]*:\/\/[^/\s:@]*:)[^@\s/]+@/gi;

interface Entry {
  name: string;
  /** A file to stream, or text. */
  file?: string;
  text?: string;
}

/** Overwrite credential columns in a database copy (secure_delete: the old values leave the file). */
function redactDatabase(path: string): string[] {
  const db = new Database(path);
  const touched: string[] = [];
  try {
    db.pragma('journal_mode = DELETE');
    db.pragma('secure_delete = ON');
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as { name: string }[];
    for (const { name } of tables) {
      const cols = (db.prepare(`PRAGMA table_info("${name.replace(/"/g, '""')}")`).all() as { name: string }[]).map((c) => c.name).filter((c) => SECRET_COLUMN.test(c));
      for (const c of cols) {
        // A value per row: keeps NOT NULL and UNIQUE constraints satisfied.
        db.prepare(`UPDATE "${name.replace(/"/g, '""')}" SET "${c}" = '<redacted ' || rowid || '>' WHERE "${c}" IS NOT NULL`).run();
        touched.push(`${name}.${c}`);
      }
    }
    db.exec('VACUUM');
  } finally {
    db.close();
  }
  return touched;
}

/** A YAML file with credential values and URL passwords replaced; comments and layout kept. */
export function redactYaml(text: string): string {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) return text.replace(URL_PASSWORD, '$1<redacted>@');
  visit(doc, {
    Pair(_, pair) {
      if (!isPair(pair) || !isScalar(pair.key) || !SECRET_YAML_KEY.test(String(pair.key.value))) return;
      const v = pair.value;
      if (isScalar(v) && v.value !== null && v.value !== '') v.value = '<redacted>';
      else if (isSeq(v)) for (const item of v.items) if (isScalar(item)) item.value = '<redacted>';
    },
    Scalar(_, node) {
      if (typeof node.value === 'string' && URL_PASSWORD.test(node.value)) node.value = node.value.replace(URL_PASSWORD, '$1<redacted>@');
      URL_PASSWORD.lastIndex = 0;
    },
  });
  return doc.toString();
}

const inside = (dir: string, p: string) => {
  const r = relative(dir, p);
  return r !== '' && !r.startsWith('..') && !r.startsWith(sep);
};

/** Build the archive; the stream ends when the last file is in (temporary copies removed then). */
export async function stateArchive(o: StateArchiveOptions): Promise<Readable> {
  const dir = resolve(o.dir);
  const tmp = mkdtempSync(join(dir, '.export-'));
  const entries: Entry[] = [];
  const skipped: { path: string; reason: string }[] = [];
  const redacted: string[] = [];
  try {
    // Databases: the open ones through their own connection; any other .db file read-only.
    const seen = new Set<string>();
    let n = 0;
    for (const s of openStores()) {
      const p = resolve(s.path);
      if (!inside(dir, p) || seen.has(p) || p.startsWith(tmp)) continue;
      seen.add(p);
      const copy = join(tmp, `${n++}.db`);
      await s.db.backup(copy);
      entries.push({ name: relative(dir, p), file: copy });
    }
    const dbDir = join(dir, 'database');
    for (const f of existsSync(dbDir) ? readdirSync(dbDir) : []) {
      const p = join(dbDir, f);
      if (!f.endsWith('.db') || seen.has(p)) continue;
      const copy = join(tmp, `${n++}.db`);
      try {
        const db = new Database(p, { readonly: true, fileMustExist: true, timeout: 2000 });
        try {
          await db.backup(copy);
        } finally {
          db.close();
        }
        entries.push({ name: relative(dir, p), file: copy });
      } catch (e) {
        skipped.push({ path: relative(dir, p), reason: (e as Error).message });
      }
    }
    if (!o.secrets) {
      for (const e of entries) for (const c of redactDatabase(e.file!)) redacted.push(`${e.name}: ${c}`);
    }
    // Configuration: the YAML files at the top of the state dir, and --config when it lives elsewhere.
    const yamls = readdirSync(dir).filter((f) => /\.ya?ml$/.test(f) && statSync(join(dir, f)).isFile()).map((f) => ({ name: f, path: join(dir, f) }));
    if (o.configPath && !inside(dir, resolve(o.configPath)) && existsSync(o.configPath)) yamls.push({ name: `config/${basename(o.configPath)}`, path: o.configPath });
    for (const y of yamls) {
      const text = readFileSync(y.path, 'utf8');
      entries.push({ name: y.name, text: o.secrets ? text : redactYaml(text) });
    }
    // Certificates (private keys only with secrets) and DIR/secrets (only with secrets).
    for (const sub of ['certificates', 'secrets']) {
      const d = join(dir, sub);
      if (!existsSync(d)) continue;
      for (const f of readdirSync(d)) {
        const p = join(d, f);
        if (!statSync(p).isFile()) continue;
        const secret = sub === 'secrets' || /\.key$|key\.pem$/i.test(f);
        if (secret && !o.secrets) continue;
        entries.push({ name: `${sub}/${f}`, file: p });
      }
    }
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
  const manifest = {
    kind: 'ctl-state-archive',
    version: o.version,
    createdAt: new Date(o.now).toISOString(),
    secrets: o.secrets,
    files: entries.map((e) => e.name),
    ...(o.secrets ? {} : { redactedColumns: redacted }),
    skipped,
  };
  const tar = tarPack();
  const gzip = createGzip();
  const out = new PassThrough();
  const cleanup = () => rmSync(tmp, { recursive: true, force: true });
  const fail = (err: Error) => {
    cleanup();
    out.destroy(err);
  };
  tar.on('error', fail);
  gzip.on('error', fail);
  tar.pipe(gzip).pipe(out);
  out.on('close', () => {
    cleanup();
    tar.destroy();
  });
  void (async () => {
    const text = (name: string, body: string, mtime: Date) => new Promise<void>((res, rej) => tar.entry({ name, mtime, mode: 0o600 }, body, (err) => (err ? rej(err) : res())));
    try {
      const mtime = new Date(o.now);
      await text('manifest.json', `${JSON.stringify(manifest, null, 2)}\n`, mtime);
      for (const e of entries) {
        if (e.text !== undefined) {
          await text(e.name, e.text, mtime);
          continue;
        }
        await new Promise<void>((res, rej) => {
          const w = tar.entry({ name: e.name, size: statSync(e.file!).size, mtime, mode: 0o600 }, (err) => (err ? rej(err) : res()));
          const r = createReadStream(e.file!);
          r.on('error', rej);
          r.pipe(w as unknown as NodeJS.WritableStream);
        });
      }
      tar.finalize();
    } catch (err) {
      fail(err as Error);
    }
  })();
  return out;
}
