/**
 * The fields 0.25 renders with html/template (pushover `html: true` message, telegram
 * `parse_mode: HTML`): values are escaped by the HTML context they land in; the other fields stay
 * text. Integrations are built from a decoded alertmanager.yml and send to a loopback recorder.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Egress } from '../../src/egress/index.js';
import { loadConfig } from '../../src/alertmanager/config/load.js';
import { defaultTemplates } from '../../src/alertmanager/template/load.js';
import { buildIntegrations, type Integration, type Notification } from '../../src/alertmanager/receivers/index.js';
import { GO_ZERO_MS } from '../../src/alertmanager/timefmt.js';

const dir = mkdtempSync(join(tmpdir(), 'ctl-html-'));
const egress = new Egress({ loopbackOnly: true, addressMap: {} });
afterAll(async () => {
  await egress.close();
  rmSync(dir, { recursive: true, force: true });
});

async function recorder(answer: string) {
  const seen: { url: string; body: string }[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ url: req.url!, body });
      res.end(answer);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { seen, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(r)) };
}

function integrations(receivers: string): Integration[] {
  const c = loadConfig(`route:\n  receiver: r\nreceivers:\n  - name: r\n${receivers}`, dir);
  return buildIntegrations(c.tree.receivers, egress).get('r')!;
}

const notification = (labels: Record<string, string>, annotations: Record<string, string>): Notification => ({
  receiver: 'r',
  groupKey: '{}:{}',
  groupLabels: {},
  alerts: [{ labels, annotations, startsAt: Date.parse('2026-01-02T03:04:05Z'), endsAt: GO_ZERO_MS, generatorURL: '', fingerprint: 'fp', resolved: false }],
  externalURL: 'http://am:9093',
  templates: defaultTemplates(),
  deadline: Date.now() + 5000,
});

const MESSAGE = '<a href="{{ .CommonAnnotations.link }}">{{ .CommonLabels.name }}</a> <a href="/s?q={{ .CommonLabels.name }}">s</a>';
const DATA = notification({ alertname: 'A', name: 'x<y>+"z"' }, { link: 'javascript:alert(1)' });
const ESCAPED = '<a href="#ZgotmplZ">x&lt;y&gt;&#43;&#34;z&#34;</a> <a href="/s?q=x%3cy%3e%2b%22z%22">s</a>';

describe('html/template fields', () => {
  it('pushover html: true escapes the message by context (and only the message)', async () => {
    const s = await recorder('{"status":1}');
    const [i] = integrations(`    pushover_configs:\n      - api_url: ${s.url}/1/messages.json\n        user_key: u1\n        token: t1\n        html: true\n        title: '{{ .CommonLabels.name }}'\n        message: '${MESSAGE}'\n`);
    expect(await i!.send(DATA)).toMatchObject({ ok: true });
    const q = new URL(s.seen[0]!.url, 'http://x').searchParams;
    expect(q.get('message')).toBe(ESCAPED);
    expect(q.get('title')).toBe('x<y>+"z"');
    await s.close();
  });

  it('pushover without html leaves the message as text', async () => {
    const s = await recorder('{"status":1}');
    const [i] = integrations(`    pushover_configs:\n      - api_url: ${s.url}/1/messages.json\n        user_key: u1\n        token: t1\n        message: '${MESSAGE}'\n`);
    expect(await i!.send(DATA)).toMatchObject({ ok: true });
    expect(new URL(s.seen[0]!.url, 'http://x').searchParams.get('message')).toBe('<a href="javascript:alert(1)">x<y>+"z"</a> <a href="/s?q=x<y>+"z"">s</a>');
    await s.close();
  });

  it('telegram parse_mode: HTML escapes by context; a template that fails goes out empty, as 0.25 sends it', async () => {
    const s = await recorder('{"ok":true,"result":{}}');
    const [i, j] = integrations(
      `    telegram_configs:\n      - api_url: ${s.url}\n        bot_token: a\n        chat_id: 7\n        parse_mode: HTML\n        message: '${MESSAGE}'\n` +
        `      - api_url: ${s.url}\n        bot_token: b\n        chat_id: 7\n        parse_mode: HTML\n        message: '<a href="{{ if .Alerts }}/x?{{ else }}/y/{{ end }}{{ .Status }}">'\n`,
    );
    expect(await i!.send(DATA)).toMatchObject({ ok: true });
    expect(JSON.parse(s.seen[0]!.body).text).toBe(ESCAPED);
    expect(await j!.send(DATA)).toMatchObject({ ok: true });
    expect(JSON.parse(s.seen[1]!.body).text).toBe('');
    await s.close();
  });

  it('pushover: a template html/template refuses fails the notification, nothing is sent', async () => {
    const s = await recorder('{"status":1}');
    const [i] = integrations(`    pushover_configs:\n      - api_url: ${s.url}/1/messages.json\n        user_key: u1\n        token: t1\n        html: true\n        message: '<a href="{{ if .Alerts }}/x?{{ else }}/y/{{ end }}{{ .Status }}">'\n`);
    const failed = await i!.send(DATA);
    expect(failed).toMatchObject({ ok: false, retry: false });
    expect((failed as { error: string }).error).toMatch(/^html\/template:/);
    expect((failed as { error: string }).error).toContain('{{.Status}} appears in an ambiguous context within a URL');
    expect(s.seen).toHaveLength(0);
    await s.close();
  });
});
