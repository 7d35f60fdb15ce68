import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

/**
 * ctl.yaml `egress.allow` in the real daemon: a refused feed URL says why and how to allow it, and an
 * edited allow-list takes effect on SIGHUP, without a restart. The URL is loopback only; it is checked
 * when the source is added, so nothing is contacted.
 */
describe('egress settings reload with SIGHUP', () => {
  let d: TestDaemon;
  const ctlYaml = (allow: unknown) => ({ egress: { allow }, pipeline: { 'owner-password': 'egress-reload-owner' } });
  const addSource = (n: number) => d.request('pipeline', 'POST', '/api/sources', { name: `intranet ${n}`, url: `http://127.0.0.5:8080/feed-${n}.xml`, source_type: 'rss' });

  beforeAll(async () => {
    d = await startDaemon({ ctlYaml: ctlYaml([]) });
  });
  afterAll(async () => {
    await d?.cleanup();
  });

  it('refuses with the reason, allows after ctl.yaml is edited and SIGHUP sent, keeps it when the new file is bad', async () => {
    const refused = await addSource(1);
    expect(refused.status).toBe(422);
    expect(refused.json.detail).toBe(
      'body/url: URL is not allowed or not reachable: private address 127.0.0.5 is not in egress.allow (to allow it, add 127.0.0.5 to egress.allow in ctl.yaml and reload with SIGHUP)',
    );

    writeFileSync(join(d.dir, 'ctl.yaml'), YAML.stringify(ctlYaml(['127.0.0.0/29'])));
    let from = d.log.length;
    d.signal('SIGHUP');
    await d.waitLog(/egress settings reloaded/, 5000, from);
    expect((await addSource(2)).status).toBe(201);

    // A bad allow-list is logged and the running one stays.
    writeFileSync(join(d.dir, 'ctl.yaml'), YAML.stringify(ctlYaml(['127.0.0.0/99'])));
    from = d.log.length;
    d.signal('SIGHUP');
    await d.waitLog(/ctl.yaml egress reload failed; keeping the previous egress settings/, 5000, from);
    expect((await addSource(3)).status).toBe(201);

    // Taking the entry out refuses again.
    writeFileSync(join(d.dir, 'ctl.yaml'), YAML.stringify(ctlYaml([])));
    from = d.log.length;
    d.signal('SIGHUP');
    await d.waitLog(/egress settings reloaded/, 5000, from);
    expect((await addSource(4)).status).toBe(422);
  });
});
