/**
 * `POST /api/skills/install {path}`: a skill folder on the daemon's machine, read only from under the
 * configured skills root (gateway.yaml `skills.root`, default DIR/skills).
 *
 * The path names a folder holding `skill.json`. It must stay under the root once every symbolic link
 * is resolved; `skill.json` itself must be a regular file (not a link, device, FIFO or socket, not a
 * hard link to a file elsewhere) of at most MAX_MANIFEST_BYTES, and no more than that is ever read.
 * Messages name the path the caller gave and what is wrong with it, never what the file holds.
 */
import { constants } from 'node:fs';
import { open, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';

export const MAX_MANIFEST_BYTES = 1024 * 1024;
const MAX_PATH = 4096;

/** Why a local install was refused: the message is safe to show the caller. */
export class LocalManifestError extends Error {}

const refuse = (message: string): never => {
  throw new LocalManifestError(message);
};

/** Whether `p` is `root` or lies below it (both absolute and normalised). */
function inside(root: string, p: string): boolean {
  const rel = relative(root, p);
  return rel === '' || (!rel.startsWith('..' + sep) && rel !== '..' && !isAbsolute(rel));
}

/** The errno code of a file-system error, for a message that says what went wrong and nothing else. */
function codeOf(e: unknown): string {
  return (e as NodeJS.ErrnoException | undefined)?.code ?? 'EIO';
}

const REASONS: Record<string, string> = {
  ENOENT: 'does not exist',
  ENOTDIR: 'is not a directory',
  EACCES: 'is not readable by the daemon',
  EPERM: 'is not readable by the daemon',
  ELOOP: 'is a symbolic link',
};

/** Read and parse `skill.json` of the folder `path` (absolute, or relative to `root`). */
export async function readLocalManifest(root: string, path: string): Promise<unknown> {
  if (path.length === 0 || path.length > MAX_PATH || path.includes('\0')) refuse('path must be a folder name of at most 4096 characters');
  let realRoot: string;
  try {
    realRoot = await realpath(root);
  } catch {
    return refuse(`the skills root ${root} does not exist (gateway.yaml skills.root)`);
  }
  const want = resolve(root, path);
  // Refused before touching the file system: /etc/shadow, /dev/zero and the like never get opened.
  if (!inside(root, want) && !inside(realRoot, want)) refuse(`path ${path} is outside the skills root ${root} (gateway.yaml skills.root)`);
  let dir: string;
  try {
    dir = await realpath(want);
    if (!inside(realRoot, dir)) refuse(`path ${path} leads outside the skills root ${root} through a symbolic link`);
    if (!(await stat(dir)).isDirectory()) refuse(`path ${path} must be a folder holding skill.json`);
  } catch (e) {
    if (e instanceof LocalManifestError) throw e;
    return refuse(`path ${path} ${REASONS[codeOf(e)] ?? 'cannot be read'}`);
  }

  const file = join(dir, 'skill.json');
  // O_NOFOLLOW: a link named skill.json is refused; O_NONBLOCK: a FIFO cannot hold the request open.
  let fh;
  try {
    fh = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (e) {
    return refuse(`${path}/skill.json ${REASONS[codeOf(e)] ?? 'cannot be read'}`);
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) refuse(`${path}/skill.json is not a regular file`);
    if (st.nlink > 1) refuse(`${path}/skill.json has other hard links; copy the file instead`);
    if (st.size > MAX_MANIFEST_BYTES) refuse(`${path}/skill.json is larger than 1 MiB`);
    // The folder could have been swapped for a link between realpath and open: check what was opened.
    const opened = await realpath(`/proc/self/fd/${fh.fd}`).catch(() => undefined);
    if (opened !== undefined && !inside(realRoot, opened)) refuse(`path ${path} leads outside the skills root ${root}`);
    const buf = Buffer.alloc(MAX_MANIFEST_BYTES + 1);
    let n = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, n, buf.length - n, n);
      if (bytesRead === 0) break;
      n += bytesRead;
      if (n > MAX_MANIFEST_BYTES) refuse(`${path}/skill.json is larger than 1 MiB`);
    }
    try {
      return JSON.parse(buf.toString('utf8', 0, n));
    } catch {
      // The parser's message quotes the text it stopped at: say only that it is not JSON.
      return refuse(`${path}/skill.json is not valid JSON`);
    }
  } finally {
    await fh.close();
  }
}
