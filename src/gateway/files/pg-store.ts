/**
 * Uploaded files in the PostgreSQL database several gateways share: the rows (`gw_files`) and the
 * bytes, in 1 MiB chunks (`gw_file_chunks`), written from the uploaded file and read back into a
 * daemon's files directory a chunk at a time, so no file is ever held whole in memory. The row is
 * written last, in the same transaction as the chunks: a file is listed only once all of it is there.
 */
import { open, rename, rm } from 'node:fs/promises';
import type { SharedPostgres } from '../../store/postgres.js';
import { toRecord, type FileData, type FileListQuery, type FileRecord, type FileRow } from './store.js';
import type { SchemaStep } from '../schema.js';

export const FILES_MIGRATION = `
  CREATE TABLE gw_files (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    purpose TEXT NOT NULL,
    filename TEXT NOT NULL,
    bytes BIGINT NOT NULL,
    sha256 TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT
  );
  CREATE INDEX gw_files_owner ON gw_files(owner, created_at, id);
  CREATE INDEX gw_files_expiry ON gw_files(expires_at) WHERE expires_at IS NOT NULL;
  CREATE TABLE gw_file_chunks (
    file_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    data BYTEA NOT NULL,
    PRIMARY KEY (file_id, seq)
  );
`;

/** Uploaded files: this capability's share of the gateway's PostgreSQL migrations (placed by version in gateway/schema.ts). */
export const FILES_PG_SCHEMA: SchemaStep[] = [{ version: 4, up: FILES_MIGRATION }];

const CHUNK = 1 << 20;

export class PgFileStore implements FileData {
  constructor(private readonly db: SharedPostgres) {}

  async insert(f: FileRecord, path: string): Promise<void> {
    const fh = await open(path, 'r');
    try {
      await this.db.transaction(async (q) => {
        const buf = Buffer.allocUnsafe(CHUNK);
        for (let seq = 0; ; seq++) {
          const { bytesRead } = await fh.read(buf, 0, CHUNK, null);
          if (bytesRead === 0) break;
          await q.query('INSERT INTO gw_file_chunks (file_id, seq, data) VALUES ($1, $2, $3)', [f.id, seq, buf.subarray(0, bytesRead)]);
        }
        await q.query('INSERT INTO gw_files (id, owner, purpose, filename, bytes, sha256, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)', [
          f.id,
          f.owner,
          f.purpose,
          f.filename,
          f.bytes,
          f.sha256,
          f.createdAt,
          f.expiresAt ?? null,
        ]);
      });
    } finally {
      await fh.close();
    }
  }

  async fetchBytes(id: string, dest: string): Promise<boolean> {
    if (!(await this.get(id))) return false;
    const tmp = `${dest}.${process.pid}.tmp`;
    const fh = await open(tmp, 'w', 0o600);
    try {
      for (let seq = 0; ; seq++) {
        const row = (await this.db.query<{ data: Buffer }>('SELECT data FROM gw_file_chunks WHERE file_id = $1 AND seq = $2', [id, seq]))[0];
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
    const r = (await this.db.query<FileRow>('SELECT * FROM gw_files WHERE id = $1', [id]))[0];
    return r ? toRecord(r) : undefined;
  }

  async delete(id: string): Promise<boolean> {
    return this.db.transaction(async (q) => {
      await q.query('DELETE FROM gw_file_chunks WHERE file_id = $1', [id]);
      return (await q.command('DELETE FROM gw_files WHERE id = $1', [id])) > 0;
    });
  }

  async list(q: FileListQuery): Promise<FileRecord[]> {
    const args: unknown[] = [q.owner];
    let where = 'owner = $1';
    if (q.purpose) {
      args.push(q.purpose);
      where += ` AND purpose = $${args.length}`;
    }
    if (q.after) {
      args.push(q.after.createdAt, q.after.id);
      where += ` AND (created_at, id) ${q.order === 'asc' ? '>' : '<'} ($${args.length - 1}, $${args.length})`;
    }
    const dir = q.order === 'asc' ? 'ASC' : 'DESC';
    args.push(q.limit + 1);
    return (await this.db.query<FileRow>(`SELECT * FROM gw_files WHERE ${where} ORDER BY created_at ${dir}, id ${dir} LIMIT $${args.length}`, args)).map(toRecord);
  }

  async expired(now: number, limit = 500): Promise<FileRecord[]> {
    return (await this.db.query<FileRow>('SELECT * FROM gw_files WHERE expires_at IS NOT NULL AND expires_at <= $1 LIMIT $2', [now, limit])).map(toRecord);
  }

  async ids(): Promise<Set<string>> {
    return new Set((await this.db.query<{ id: string }>('SELECT id FROM gw_files')).map((r) => r.id));
  }
}
