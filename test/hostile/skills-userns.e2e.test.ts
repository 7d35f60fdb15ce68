/**
 * A daemon started as root of a user namespace that maps only root (`unshare -r`, how an
 * unprivileged user gets a private network namespace): the skill runners cannot switch to uid 65534
 * there (setuid fails with EINVAL), so they run as that root, which outside is the unprivileged user
 * who made the namespace. Skills and plugins must work, not fail with a 500 "spawn EINVAL".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

/** Whether `unshare -r` works here (user namespaces allowed). */
function userNamespaces(): boolean {
  try {
    return execFileSync('unshare', ['-r', 'cat', '/proc/self/uid_map'], { encoding: 'utf8' }).trim().split(/\s+/)[2] === '1';
  } catch {
    return false;
  }
}

describe.runIf(userNamespaces())('skills in a user namespace that maps only root', () => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startDaemon({ wrap: ['unshare', '-r', '--'] });
  }, 60_000);
  afterAll(async () => {
    await d?.cleanup();
  });

  it('runs a skill (its runner as the namespace root, the only id there)', async () => {
    const manifest = { name: 'userns', version: '1', description: 'userns', schema: {}, handlerCode: 'return 6 * 7;' };
    expect((await d.request('gateway', 'POST', '/api/skills/install', manifest)).status).toBe(201);
    const r = await d.request('gateway', 'POST', '/api/skills/executions', { skillName: 'userns', input: {} });
    expect(r.status, r.text).toBe(201);
    expect(r.json).toMatchObject({ status: 'success', output: 42 });
  }, 60_000);
});
