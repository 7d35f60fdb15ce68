import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/alertmanager/config/load.js';
import { DEFAULT_CONFIG } from '../../src/alertmanager/index.js';

describe('loadConfig', () => {
  it('re-marshals the default file like Alertmanager (defaults filled, struct order)', () => {
    const c = loadConfig(DEFAULT_CONFIG);
    expect(c.original).toBe(`global:
  resolve_timeout: 5m
  http_config:
    follow_redirects: true
    enable_http2: true
  smtp_hello: localhost
  smtp_require_tls: true
  pagerduty_url: https://events.pagerduty.com/v2/enqueue
  opsgenie_api_url: https://api.opsgenie.com/
  wechat_api_url: https://qyapi.weixin.qq.com/cgi-bin/
  victorops_api_url: https://alert.victorops.com/integrations/generic/20131114/alert/
  telegram_api_url: https://api.telegram.org
  webex_api_url: https://webexapis.com/v1/messages
route:
  receiver: default
  group_by:
  - alertname
  continue: false
receivers:
- name: default
templates: []
`);
    expect(c.resolveTimeoutMs).toBe(300_000);
    expect(c.receivers).toEqual(['default']);
  });
  it('hides secrets and keeps receivers nobody routes to', () => {
    const c = loadConfig(`
route: {receiver: a}
receivers:
- name: a
- name: b
  webhook_configs: [{url: 'http://127.0.0.1:1/', http_config: {basic_auth: {username: u, password: p}}}]
`);
    expect(c.original).toContain('password: <secret>');
    expect(c.original).not.toContain('password: p\n');
    expect(c.receivers).toEqual(['a', 'b']);
    // re-loading the marshalled text is accepted (amtool does this)
    expect(() => loadConfig(c.original)).not.toThrow();
  });
  it.each([
    ['', 'no route provided in config'],
    ['receivers: [{name: x}]\n', 'no routes provided'],
    ['route:\n  receiver: x\n  foo: 1\nreceivers:\n- name: x\n', 'yaml: unmarshal errors:\n  line 3: field foo not found in type config.plain'],
    ['route: {receiver: y}\nreceivers: [{name: x}]\n', 'undefined receiver "y" used in route'],
    ['route: {receiver: x, continue: true}\nreceivers: [{name: x}]\n', 'cannot have continue in root route'],
    ['route: {receiver: x, group_by: [a, a]}\nreceivers: [{name: x}]\n', 'duplicated label "a" in group_by'],
    ['route: {receiver: x}\nreceivers: [{name: x}, {name: x}]\n', 'notification config name "x" is not unique'],
    ['route: {receiver: x, group_wait: 5x}\nreceivers: [{name: x}]\n', 'not a valid duration string: "5x"'],
    ['route:\n  receiver: [x]\n  continue: maybe\nreceivers: [{name: x}]\n', 'yaml: unmarshal errors:\n  line 2: cannot unmarshal !!seq into string\n  line 3: cannot unmarshal !!str `maybe` into bool'],
  ])('rejects %j', (text, msg) => {
    expect(() => loadConfig(text)).toThrow(msg);
  });
});
