/**
 * SQL of uploaded files, on either database (store/sql.ts): one row per file, its bytes on disk
 * under the files directory. Several daemons sharing the PostgreSQL database keep the bytes there
 * as well (`file_chunks`, 1 MiB chunks), written from the uploaded file and read back into a
 * daemon's files directory a chunk at a time, so no file is ever held whole in memory; the row is
 * written last, in the same transaction as the chunks: a file is listed only once all of it is there.
 */
import { open, rename, rm } from 'node:fs/promises';
import type { Sql } from '../../store/sql.js';
import type { SchemaStep } from '../schema.js';
import { PG_TYPES, SQLITE_TYPES, type ColumnTypes } from '../sql.js';

/** The files table and its indexes as `t`'s database declares them. */
const filesTable = (t: ColumnTypes) => `
CREATE TABLE ${t.p}files (
  id TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  purpose TEXT NOT NULL,
  filename TEXT NOT NULL,
  bytes ${t.big} NOT NULL,
  sha256 TEXT NOT NULL,
  created_at ${t.big} NOT NULL,
  expires_at ${t.big}
);
CREATE INDEX ${t.p}files_owner ON ${t.p}files(owner, created_at, id);
CREATE INDEX ${t.p}files_expiry ON ${t.p}files(expires_at) WHERE expires_at IS NOT NULL;
`;

/** Uploaded files in the shared database (`gw_files`, and the bytes in `gw_file_chunks`). */
export const FILES_MIGRATION = `${filesTable(PG_TYPES)}
CREATE TABLE gw_file_chunks (
  file_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  data BYTEA NOT NULL,
  PRIMARY KEY (file_id, seq)
);
`;

const CHUNK = 1 << 20;

/** Uploaded files: this capability's share of the gateway's SQLite migrations (placed by version in gateway/schema.ts). */
/** Uploaded files: this capability's share of the gateway's PostgreSQL migrations (placed by version in gateway/schema.ts). */
export const FILES_PG_SCHEMA: SchemaStep[] = [{ version: 4, up: FILES_MIGRATION }];

export const FILES_SCHEMA: SchemaStep[] = [
  // Uploaded files (their bytes live under uploads/gateway/files/).
  { version: 4, up: filesTable(SQLITE_TYPES) },
];

export interface FileRecord {
  id: string;
  /** The API key id that uploaded it ('' without a key: the control socket, or keys not required). */
  owner: string;
  purpose: string;
  filename: string;
  bytes: number;
  sha256: string;
  /** Milliseconds. */
  createdAt: number;
  expiresAt?: number;
}

export interface FileRow {
  id: string;
  owner: string;
  purpose: string;
  filename: string;
  bytes: number;
  sha256: string;
  created_at: number;
  expires_at: number | null;
}

export const toRecord = (r: FileRow): FileRecord => ({
  id: r.id,
  owner: r.owner,
  purpose: r.purpose,
  filename: r.filename,
  bytes: r.bytes,
  sha256: r.sha256,
  createdAt: r.created_at,
  ...(r.expires_at !== null ? { expiresAt: r.expires_at } : {}),
});

export interface FileListQuery {
  owner: string;
  purpose?: string;
  /** Rows after this id in the chosen order. */
  after?: FileRecord;
  limit: number;
  order: 'asc' | 'desc';
}

/** What the file service needs of its store; `bytes` only where the bytes are shared too. */
export interface FileData {
  /** Record a file whose bytes are at `path` (the row is the commit: written last). */
  insert(f: FileRecord, path: string): Promise<void>;
  get(id: string): Promise<FileRecord | undefined>;
  delete(id: string): Promise<boolean>;
  list(q: FileListQuery): Promise<FileRecord[]>;
  expired(now: number, limit?: number): Promise<FileRecord[]>;
  ids(): Promise<Set<string>>;
  /** Copy a recorded file's bytes to `dest` (several daemons: a file uploaded elsewhere); false when there are none. */
  fetchBytes?(id: string, dest: string): Promise<boolean>;
}

const INSERT = 'INSERT INTO files (id, owner, purpose, filename, bytes, sha256, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)';
const values = (f: FileRecord) => [f.id, f.owner, f.purpose, f.filename, f.bytes, f.sha256, f.createdAt, f.expiresAt ?? null];

export class FileStore implements FileData {
  /** Set where the database keeps the bytes too (the shared one). */
  readonly fetchBytes?: (id: string, dest: string) => Promise<boolean>;
  private readonly sharedBytes: boolean;

  constructor(private readonly sql: Sql) {
    this.sharedBytes = sql.dialect === 'postgres';
    if (this.sharedBytes) this.fetchBytes = (id, dest) => this.copyBytes(id, dest);
  }

  async insert(f: FileRecord, path: string): Promise<void> {
    if (!this.sharedBytes) {
      await this.sql.run(INSERT, ...values(f));
      return;
    }
    const fh = await open(path, 'r');
    try {
      await this.sql.transaction(async (tx) => {
        const buf = Buffer.allocUnsafe(CHUNK);
        for (let seq = 0; ; seq++) {
          const { bytesRead } = await fh.read(buf, 0, CHUNK, null);
          if (bytesRead === 0) break;
          await tx.run('INSERT INTO file_chunks (file_id, seq, data) VALUES (?, ?, ?)', f.id, seq, buf.subarray(0, bytesRead));
        }
        await tx.run(INSERT, ...values(f));
      });
    } finally {
      await fh.close();
    }
  }

  /** Copy a file's bytes from the database to `dest`, a chunk at a time; false when it has no such file. */
  private async copyBytes(id: string, dest: string): Promise<boolean> {
    if (!(await this.get(id))) return false;
    const tmp = `${dest}.${process.pid}.tmp`;
    const fh = await open(tmp, 'w', 0o600);
    try {
      for (let seq = 0; ; seq++) {
        const row = await this.sql.get<{ data: Buffer }>('SELECT data FROM file_chunks WHERE file_id = ? AND seq = ?', id, seq);
        if (!row) break;
        await fh.write(row.data);
      }
    } catch (e) {
      await fh.close();
      await rm(tmp, { force: true });
      throw e;
    }
    await fh.close();
    await rename(tmp, dest);
    return true;
  }

  async get(id: string): Promise<FileRecord | undefined> {
    const r = await this.sql.get<FileRow>('SELECT * FROM files WHERE id = ?', id);
    return r ? toRecord(r) : undefined;
  }

  async delete(id: string): Promise<boolean> {
    if (!this.sharedBytes) return (await this.sql.run('DELETE FROM files WHERE id = ?', id)) > 0;
    return this.sql.transaction(async (tx) => {
      await tx.run('DELETE FROM file_chunks WHERE file_id = ?', id);
      return (await tx.run('DELETE FROM files WHERE id = ?', id)) > 0;
    });
  }

  /** One more than `limit` rows when there are more (the caller says has_more). */
  async list(q: FileListQuery): Promise<FileRecord[]> {
    const args: unknown[] = [q.owner];
    let where = 'owner = ?';
    if (q.purpose) {
      where += ' AND purpose = ?';
      args.push(q.purpose);
    }
    if (q.after) {
      where += q.order === 'asc' ? ' AND (created_at, id) > (?, ?)' : ' AND (created_at, id) < (?, ?)';
      args.push(q.after.createdAt, q.after.id);
    }
    const dir = q.order === 'asc' ? 'ASC' : 'DESC';
    return (await this.sql.all<FileRow>(`SELECT * FROM files WHERE ${where} ORDER BY created_at ${dir}, id ${dir} LIMIT ?`, ...args, q.limit + 1)).map(toRecord);
  }

  /** Files whose expiry has passed. */
  async expired(now: number, limit = 500): Promise<FileRecord[]> {
    return (await this.sql.all<FileRow>('SELECT * FROM files WHERE expires_at IS NOT NULL AND expires_at <= ? LIMIT ?', now, limit)).map(toRecord);
  }

  /** Every file id (the start-up sweep of orphaned bytes on disk). */
  async ids(): Promise<Set<string>> {
    return new Set((await this.sql.all<{ id: string }>('SELECT id FROM files')).map((r) => r.id));
  }
}
