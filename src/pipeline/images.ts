/**
 * Post images on disk, under the component's uploads dir. With several daemons on one database the
 * bytes are also kept in it (`pl_images`): an image uploaded through one daemon is served and
 * published by any other, which copies it to its own uploads dir the first time it needs it.
 */
import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Sql } from '../store/sql.js';

export class PostImages {
  /** `shared`: the database several daemons share (absent: the uploads dir is all there is). */
  constructor(
    readonly dir: string,
    private readonly shared?: Sql,
  ) {}

  /** A new image was written to `dir/file`: share it. */
  async saved(file: string): Promise<void> {
    if (!this.shared) return;
    const data = await readFile(join(this.dir, file));
    await this.shared.run('INSERT INTO images (name, data) VALUES (?, ?) ON CONFLICT (name) DO NOTHING', file, data);
  }

  /** The local path of a stored image, copied from the shared database when this daemon lacks it; null when there is none. */
  async localPath(file: string): Promise<string | null> {
    const path = join(this.dir, file);
    // Shared, the database says whether it still exists (another daemon may have removed it).
    if (this.shared && !(await this.shared.get('SELECT 1 FROM images WHERE name = ?', file))) {
      await rm(path, { force: true }).catch(() => undefined);
      return null;
    }
    const st = await stat(path).catch(() => null);
    if (st?.isFile()) return path;
    if (!this.shared) return null;
    const row = await this.shared.get<{ data: Buffer }>('SELECT data FROM images WHERE name = ?', file);
    if (!row) return null;
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const tmp = `${path}.${process.pid}.tmp`;
    await writeFile(tmp, row.data, { mode: 0o600 });
    await rename(tmp, path);
    return path;
  }

  /** Forget an image (here and, shared, for every daemon: their copies are no longer served). */
  async removed(file: string): Promise<void> {
    await rm(join(this.dir, file), { force: true }).catch(() => undefined);
    await this.shared?.run('DELETE FROM images WHERE name = ?', file);
  }
}
