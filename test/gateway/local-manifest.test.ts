/**
 * Local skill installs read `skill.json` from a folder under the skills root only: paths outside it,
 * links leading out of it, devices, FIFOs, hard links and oversized files are refused with a message
 * that never quotes what a file holds.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseSkills, skillsRoot } from '../../src/gateway/skills/config.js';
import { LocalManifestError, MAX_MANIFEST_BYTES, readLocalManifest } from '../../src/gateway/skills/local-manifest.js';

const base = mkdtempSync(join(tmpdir(), 'ctl-local-manifest-'));
const root = join(base, 'skills');
const outside = join(base, 'outside');
mkdirSync(root);
mkdirSync(outside);
const SECRET = 'root:$6$s3cr3t-hash-of-the-admin:19000:0:99999:7:::';
writeFileSync(join(outside, 'skill.json'), SECRET);
writeFileSync(join(outside, 'secret.txt'), SECRET);
afterAll(() => rmSync(base, { recursive: true, force: true }));

const folder = (name: string, content?: string): string => {
  const d = join(root, name);
  mkdirSync(d, { recursive: true });
  if (content !== undefined) writeFileSync(join(d, 'skill.json'), content);
  return d;
};

async function refused(path: string, re: RegExp): Promise<string> {
  const err = await readLocalManifest(root, path).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, path).toBeInstanceOf(LocalManifestError);
  const message = (err as Error).message;
  expect(message).toMatch(re);
  expect(message).not.toContain('s3cr3t');
  expect(message).not.toContain('root:');
  return message;
}

describe('readLocalManifest', () => {
  it('reads skill.json of a folder under the root, by absolute or relative path', async () => {
    folder('echo', JSON.stringify({ name: 'echo' }));
    folder('deep/er', JSON.stringify({ name: 'deeper' }));
    expect(await readLocalManifest(root, join(root, 'echo'))).toEqual({ name: 'echo' });
    expect(await readLocalManifest(root, 'echo')).toEqual({ name: 'echo' });
    expect(await readLocalManifest(root, 'deep/er')).toEqual({ name: 'deeper' });
  });

  it('refuses paths outside the root without opening them', async () => {
    await refused('/etc/shadow', /outside the skills root/);
    await refused('/dev/zero', /outside the skills root/);
    await refused('/proc/self/environ', /outside the skills root/);
    await refused('../outside', /outside the skills root/);
    await refused(join(root, '..', 'outside'), /outside the skills root/);
    await refused('a\0b', /at most 4096/);
  });

  it('refuses links that lead out of the root, and a skill.json that is a link', async () => {
    symlinkSync(outside, join(root, 'escape'));
    await refused('escape', /outside the skills root .* through a symbolic link/);
    const d = folder('linked');
    symlinkSync(join(outside, 'secret.txt'), join(d, 'skill.json'));
    await refused('linked', /symbolic link/);
    const h = folder('hardlinked');
    linkSync(join(outside, 'secret.txt'), join(h, 'skill.json'));
    await refused('hardlinked', /hard links/);
  });

  it('refuses what is not a regular file of at most 1 MiB, reading no more than that', async () => {
    const f = folder('fifo');
    execFileSync('mkfifo', [join(f, 'skill.json')]);
    const t0 = Date.now();
    await refused('fifo', /not a regular file/);
    expect(Date.now() - t0).toBeLessThan(5000); // a FIFO with no writer must not hold the read open
    const dev = folder('dev');
    symlinkSync('/dev/zero', join(dev, 'skill.json'));
    await refused('dev', /symbolic link/);
    folder('dir/skill.json');
    await refused('dir', /not a regular file/);
    folder('big', ' '.repeat(MAX_MANIFEST_BYTES + 1));
    await refused('big', /larger than 1 MiB/);
    await refused('nothing-here', /does not exist/);
    writeFileSync(join(root, 'file.json'), '{}');
    await refused('file.json', /must be a folder/);
  });

  it('says a file is not JSON without quoting it', async () => {
    folder('shadowish', SECRET);
    await refused('shadowish', /is not valid JSON$/);
  });

  it('refuses everything when the root does not exist', async () => {
    const err = await readLocalManifest(join(base, 'missing-root'), 'echo').catch((e: Error) => e);
    expect((err as Error).message).toMatch(/skills root .* does not exist/);
  });
});

describe('skills.root', () => {
  it('defaults to DIR/skills; a relative root is taken from the state dir, an absolute one as it is', () => {
    expect(skillsRoot('/var/lib/ctl', parseSkills(undefined, {}))).toBe('/var/lib/ctl/skills');
    expect(skillsRoot('/var/lib/ctl', parseSkills({ root: 'mine' }, {}))).toBe('/var/lib/ctl/mine');
    expect(skillsRoot('/var/lib/ctl', parseSkills({ root: '/srv/skills' }, {}))).toBe('/srv/skills');
    expect(() => parseSkills({ root: '' }, {})).toThrow(/root/);
  });
});
