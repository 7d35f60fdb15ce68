/**
 * SQL of uploaded files: one row per file (its bytes are on disk, under the files directory). The
 * daemon's SQLite file answers here; several daemons share the PostgreSQL one (pg-store.ts),
 * which keeps the bytes as well.
 */
import type { Store } from '../../store/index.js';
import type { SchemaStep } from '../schema.js';

/** Uploaded files: this capability's share of the gateway's SQLite migrations (placed by version in gateway/schema.ts). */
export const FILES_SCHEMA: SchemaStep[] = [
  {
    // Uploaded files (their bytes live under uploads/gateway/files/).
    version: 4,
    up: `
CREATE TABLE files (
  id TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  purpose TEXT NOT NULL,
  filename TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER
);
CREATE INDEX files_owner ON files(owner, created_at, id);
CREATE INDEX files_expiry ON files(expires_at) WHERE expires_at IS NOT NULL;
`,
  },
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

export class FileStore implements FileData {
  constructor(private readonly store: Store) {}

  async insert(f: FileRecord): Promise<void> {
    this.store
      .prepare('INSERT INTO files (id, owner, purpose, filename, bytes, sha256, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(f.id, f.owner, f.purpose, f.filename, f.bytes, f.sha256, f.createdAt, f.expiresAt ?? null);
  }

  async get(id: string): Promise<FileRecord | undefined> {
    const r = this.store.prepare('SELECT * FROM files WHERE id = ?').get(id) as FileRow | undefined;
    return r ? toRecord(r) : undefined;
  }

  async delete(id: string): Promise<boolean> {
    return this.store.prepare('DELETE FROM files WHERE id = ?').run(id).changes > 0;
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
    const rows = this.store.prepare(`SELECT * FROM files WHERE ${where} ORDER BY created_at ${dir}, id ${dir} LIMIT ?`).all(...args, q.limit + 1) as FileRow[];
    return rows.map(toRecord);
  }

  /** Files whose expiry has passed. */
  async expired(now: number, limit = 500): Promise<FileRecord[]> {
    return (this.store.prepare('SELECT * FROM files WHERE expires_at IS NOT NULL AND expires_at <= ? LIMIT ?').all(now, limit) as FileRow[]).map(toRecord);
  }

  /** Every file id (the start-up sweep of orphaned bytes on disk). */
  async ids(): Promise<Set<string>> {
    return new Set((this.store.prepare('SELECT id FROM files').all() as { id: string }[]).map((r) => r.id));
  }
}
