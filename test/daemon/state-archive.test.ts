/** The state archive's YAML redaction: credential values and URL passwords go, everything else stays. */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { redactYaml } from '../../src/daemon/state-archive.js';

describe('redactYaml', () => {
  it('replaces credential values, in block and flow style, and URL passwords; keeps comments and other keys', () => {
    const text = `# keep me
global:
  smtp_auth_password: hunter2
  slack_api_url: https://hooks.example/T/B/x
receivers:
  - name: pd
    pagerduty_configs: [{routing_key: abc123, url: "https://u:pw@203.0.113.1/x"}]
providers:
  - {id: oa, api_key: sk-1, api_keys: [sk-2, sk-3], max_tokens: 100, api_key_id: kid}
keys:
  - {name: a, key: sk-4, token_limit: 5}
bearer_token: t0k
`;
    const out = redactYaml(text);
    expect(out).toContain('# keep me');
    const y = parse(out) as any;
    expect(y.global.smtp_auth_password).toBe('<redacted>');
    expect(y.global.slack_api_url).toBe('https://hooks.example/T/B/x');
    expect(y.receivers[0].pagerduty_configs[0]).toEqual({ routing_key: '<redacted>', url: 'https://u:<redacted>@203.0.113.1/x' });
    expect(y.providers[0]).toEqual({ id: 'oa', api_key: '<redacted>', api_keys: ['<redacted>', '<redacted>'], max_tokens: 100, api_key_id: 'kid' });
    expect(y.keys[0]).toEqual({ name: 'a', key: '<redacted>', token_limit: 5 });
    expect(y.bearer_token).toBe('<redacted>');
    for (const s of ['hunter2', 'abc123', ':pw@', 'sk-1', 'sk-2', 'sk-3', 'sk-4', 't0k']) expect(out).not.toContain(s);
  });

  it('a file that is not valid YAML still loses its URL passwords', () => {
    expect(redactYaml('a: [\nurl: http://u:secret@127.0.0.1/\n')).not.toContain('secret');
  });
});
