import { afterAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, startDaemon, type TestDaemon } from '../helpers/daemon.js';

const example = (name: string) => readFileSync(join(ROOT, 'examples', name), 'utf8');

/** The shipped examples are configuration a user copies: the daemon must accept them as they are. */
describe('examples/', () => {
  let d: TestDaemon | undefined;
  afterAll(async () => {
    await d?.cleanup();
  });

  it('gateway.yaml, rate_limit.yaml and ctl.yaml start a daemon', async () => {
    const ctl = example('ctl.yaml').replace(/address: 127\.0\.0\.1:\d+/g, 'address: 127.0.0.1:0');
    d = await startDaemon({
      daemonYaml: null,
      files: { 'ctl.yaml': ctl, 'gateway.yaml': example('gateway.yaml'), 'rate_limit.yaml': example('rate_limit.yaml') },
      // The variables gateway.yaml names (key_env, api_key_env), as a user would export them.
      env: { GATEWAY_APP_KEY: 'sk-gw-app-example', ANTHROPIC_API_KEY: 'sk-ant-example', LOCAL_API_KEY: 'sk-local' },
    });
    const combos = await d.request('gateway', 'GET', '/api/combos');
    expect(combos.status).toBe(200);
    expect(JSON.stringify(combos.json)).toContain('smart');
    const cache = await d.request('gateway', 'GET', '/api/cache');
    expect(JSON.stringify(cache.json)).toContain('deterministic');
    const rl = await d.request('core', 'GET', '/core/1.0/ratelimit');
    expect(rl.status).toBe(200);
  });

  it('the systemd unit runs ctl serve as Type=exec and reloads with SIGHUP', () => {
    const unit = example('ctl.service');
    expect(unit).toMatch(/^Type=exec$/m);
    expect(unit).toMatch(/^ExecStart=\S*ctl serve/m);
    expect(unit).toMatch(/^ExecReload=\/bin\/kill -HUP \$MAINPID$/m);
  });
});
