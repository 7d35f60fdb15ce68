import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadStartupConfig } from '../../src/daemon/startup-config.js';
import { ctlYamlKeys } from '../../src/daemon/config-keys.js';
import { COMPONENTS } from '../../src/daemon/components.js';
import { ROOT, startDaemon } from '../helpers/daemon.js';

const dir = mkdtempSync(join(tmpdir(), 'ctl-keys-'));
const KEYS = ctlYamlKeys(COMPONENTS);
const load = (text: string) => {
  const file = join(dir, 'ctl.yaml');
  writeFileSync(file, text);
  return () => loadStartupConfig(file, true, {}, KEYS);
};

describe('ctl.yaml: every key is checked', () => {
  it.each([
    ['log-levle: debug\n', /ctl\.yaml: unknown key "log-levle" \(did you mean "log-level"\?\)/],
    ['alertmanger:\n  data-retention: 1h\n', /unknown key "alertmanger" \(did you mean "alertmanager"\?\)/],
    ['servers:\n  gatway:\n    address: 127.0.0.1:1\n', /unknown key "servers\.gatway" \(did you mean "servers\.gateway"\?\)/],
    ['egress:\n  alow: [127.0.0.1]\n', /unknown key "egress\.alow" \(did you mean "egress\.allow"\?\)/],
    ['gateway:\n  require_api_kye: true\n', /unknown key "gateway\.require_api_kye" \(did you mean "gateway\.require_api_key"\?\)/],
    ['gateway:\n  webhooks: {max_attempt: 3}\n', /unknown key "gateway\.webhooks\.max_attempt"/],
    ['alertmanager:\n  retention: 1h\n', /unknown key "alertmanager\.retention"/],
    ['storage:\n  postgress: postgres://x\n', /unknown key "storage\.postgress" \(did you mean "storage\.postgres"\?\)/],
    ['servers:\n  nodes:\n    idle-timout: 5s\n', /unknown key "servers\.nodes\.idle-timout" \(did you mean "servers\.nodes\.idle-timeout"\?\)/],
    ['nodes:\n  poll: {intervall: 60}\n', /unknown key "nodes\.poll\.intervall"/],
    ['pipeline:\n  schedules: {runn: "* * * * *"}\n', /unknown key "pipeline\.schedules\.runn"/],
    ['alerts:\n  gatway: false\n', /unknown key "alerts\.gatway"/],
  ])('refuses %j naming the key and the file', (text, message) => {
    expect(load(text)).toThrow(message);
    expect(load(text)).toThrow(join(dir, 'ctl.yaml'));
  });

  it('takes every key it documents: the shipped example and maps of free keys', () => {
    expect(load(readFileSync(join(ROOT, 'examples', 'ctl.yaml'), 'utf8'))).not.toThrow();
    expect(load('egress:\n  address-map: {"203.0.113.7:30003": "127.0.0.1:30003"}\nservers:\n  core: {header-timeout: 5s}\nalerts: {nodes: false}\n')).not.toThrow();
  });

  it('a typo stops the daemon at start, naming the key and the file', async () => {
    const err = await startDaemon({ ctlYaml: { 'log-levle': 'debug' } }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/ctl serve: start-up failed: .*ctl\.yaml: unknown key "log-levle" \(did you mean "log-level"\?\)/);
  });
});
