/**
 * Receiver integrations where no differential against 0.25 is possible (Pushover has no URL option
 * in 0.25, Teams came after it, PagerDuty v1's URL is fixed) and the behaviour around the wire:
 * retry decisions, TLS and auth options, token refresh, HTML escaping, SigV4 signatures, SMTP
 * authentication and STARTTLS. Each integration is built from a decoded alertmanager.yml, as the
 * dispatcher builds it, and sends to loopback servers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { SignatureV4 } from '@smithy/signature-v4';
import { Sha256 } from '../helpers/sha256.js';
import { Egress } from '../../src/egress/index.js';
import { loadConfig } from '../../src/alertmanager/config/load.js';
import { defaultTemplates } from '../../src/alertmanager/template/load.js';
import { buildIntegrations, type Integration, type Notification } from '../../src/alertmanager/receivers/index.js';
import { GO_ZERO_MS } from '../../src/alertmanager/timefmt.js';
import { generateSelfSigned } from '../../src/daemon/certificates.js';
import { parseMail } from '../helpers/mail.js';
import { createTestCa } from '../helpers/test-pki.js';

interface Req {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** An HTTP(S) server that records requests and answers with `answer` (status, body). */
async function recorder(answer: (r: Req) => [number, string], tls?: { cert: string; key: string }) {
  const seen: Req[] = [];
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const r = { method: req.method!, url: req.url!, headers: req.headers, body };
      seen.push(r);
      const [status, text] = answer(r);
      res.writeHead(status).end(text);
    });
  };
  const server: Server = tls ? createHttpsServer(tls, handler) : createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return { seen, port, url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(r)) };
}

const dir = mkdtempSync(join(tmpdir(), 'ctl-receivers-'));
const egress = new Egress({ loopbackOnly: true, addressMap: {} });

function integrations(receivers: string): Integration[] {
  const c = loadConfig(`route:\n  receiver: r\nreceivers:\n  - name: r\n${receivers}`, dir);
  return buildIntegrations(c.tree.receivers, egress).get('r')!;
}

const alert = (instance: string, resolved = false, extra: Record<string, string> = {}) => ({
  labels: { alertname: 'DiskFull', instance, ...extra },
  annotations: { summary: `disk on ${instance}`, description: `${instance} is full` },
  startsAt: Date.parse('2026-01-02T03:04:05Z'),
  endsAt: resolved ? Date.parse('2026-01-02T04:00:00Z') : GO_ZERO_MS,
  generatorURL: '',
  fingerprint: `fp-${instance}`,
  resolved,
});

function notification(alerts = [alert('db1'), alert('db2')]): Notification {
  return { receiver: 'r', groupKey: '{}:{alertname="DiskFull"}', groupLabels: { alertname: 'DiskFull' }, alerts, externalURL: 'http://am:9093', templates: defaultTemplates(), deadline: Date.now() + 5000 };
}

afterAll(async () => {
  await egress.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('receivers without a 0.25 differential', () => {
  it('pushover: parameters in the query, retry and expire in seconds, "(no details)" for an empty message', async () => {
    const s = await recorder(() => [200, '{"status":1}']);
    const [i] = integrations(`    pushover_configs:\n      - api_url: ${s.url}/1/messages.json\n        user_key: u1\n        token: t1\n        message: '  '\n        retry: 2m\n        html: true\n`);
    expect(await i!.send(notification())).toMatchObject({ ok: true });
    const r = s.seen[0]!;
    expect(r.method).toBe('POST');
    expect(r.body).toBe('');
    expect(r.headers['content-type']).toBe('text/plain');
    const q = new URL(r.url, 'http://x').searchParams;
    expect([...q.keys()]).toEqual(['expire', 'html', 'message', 'priority', 'retry', 'sound', 'title', 'token', 'url', 'url_title', 'user']);
    expect(Object.fromEntries(q)).toMatchObject({ token: 't1', user: 'u1', message: '(no details)', retry: '120', expire: '3600', html: '1', priority: '2', title: '[FIRING:2] DiskFull ', url: 'http://am:9093/#/alerts?receiver=r' });
    await s.close();
  });

  it('msteams: a MessageCard with the default title and text, red while firing and green when resolved', async () => {
    const s = await recorder(() => [200, '1']);
    const [i] = integrations(`    msteams_configs:\n      - webhook_url: ${s.url}/hook\n`);
    await i!.send(notification());
    await i!.send(notification([alert('db1', true)]));
    const [firing, resolved] = s.seen.map((r) => JSON.parse(r.body) as Record<string, string>);
    expect(firing).toEqual({ '@context': 'http://schema.org/extensions', type: 'MessageCard', title: '[FIRING:2] DiskFull ', summary: '[FIRING:2] DiskFull ', text: '\n\n# Alerts Firing:\n - db1 is full\n - db2 is full\n\n\n\n', themeColor: '8C1A1A' });
    expect(resolved!.themeColor).toBe('2DC72D');
    expect(resolved!.title).toBe('[RESOLVED] DiskFull (db1)');
    await s.close();
  });

  it('telegram in HTML mode escapes every value, not the template text', async () => {
    const s = await recorder(() => [200, '{"ok":true,"result":{}}']);
    const [i] = integrations(`    telegram_configs:\n      - api_url: ${s.url}\n        bot_token: 'bt'\n        chat_id: 7\n        message: '<b>{{ .CommonLabels.instance }}</b> {{ "a&b" | safeHtml }}'\n`);
    const n = notification([alert('<script>"x"</script>')]);
    expect(await i!.send(n)).toMatchObject({ ok: true });
    expect(s.seen[0]!.url).toBe('/botbt/sendMessage');
    expect(JSON.parse(s.seen[0]!.body)).toEqual({ chat_id: '7', disable_web_page_preview: 'true', parse_mode: 'HTML', text: '<b>&lt;script&gt;&#34;x&#34;&lt;/script&gt;</b> a&b' });
    await s.close();
  });

  it('telegram: an answer without ok:true is an error worth another attempt', async () => {
    const s = await recorder(() => [400, '{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}']);
    const [i] = integrations(`    telegram_configs:\n      - api_url: ${s.url}\n        bot_token: 'bt'\n        chat_id: 7\n`);
    expect(await i!.send(notification())).toEqual({ ok: false, retry: true, error: 'telegram: Bad Request: chat not found' });
    await s.close();
  });

  it('wechat: the token is fetched once, and fetched again after errcode 42001', async () => {
    let expired = true;
    const s = await recorder((r) => {
      if (r.url.startsWith('/gettoken')) return [200, `{"access_token":"tok-${s.seen.length}"}`];
      if (expired) {
        expired = false;
        return [200, '{"errcode":42001,"errmsg":"access_token expired"}'];
      }
      return [200, '{"errcode":0,"errmsg":"ok"}'];
    });
    const [i] = integrations(`    wechat_configs:\n      - api_url: ${s.url}/\n        api_secret: sec\n        corp_id: corp\n        message_type: markdown\n`);
    expect(await i!.send(notification())).toEqual({ ok: false, retry: true, error: 'access_token expired' });
    expect(await i!.send(notification())).toMatchObject({ ok: true });
    expect(await i!.send(notification())).toMatchObject({ ok: true });
    expect(s.seen.map((r) => r.url.split('?')[0])).toEqual(['/gettoken', '/message/send', '/gettoken', '/message/send', '/message/send']);
    expect(s.seen[0]!.url).toBe('/gettoken?corpid=corp&corpsecret=sec');
    const body = JSON.parse(s.seen[1]!.body) as { msgtype: string; markdown: { content: string }; text: { content: string } };
    expect(body.msgtype).toBe('markdown');
    expect(body.markdown.content).toMatch(/^\[FIRING:2\] DiskFull/);
    expect(body.text.content).toBe('');
    await s.close();
  });

  it('retries 5xx and the integration’s own codes, and takes other answers as final', async () => {
    let status = 500;
    const s = await recorder(() => [status, 'upstream says no']);
    const [slack, hook, pd] = integrations(
      `    slack_configs:\n      - api_url: ${s.url}/slack\n    webhook_configs:\n      - url: ${s.url}/hook\n    pagerduty_configs:\n      - url: ${s.url}/pd\n        routing_key: k\n`,
    );
    const order = [slack!, hook!, pd!].sort((a, b) => a.kind.localeCompare(b.kind));
    const [pagerduty, slackI, webhook] = order;
    expect(await slackI!.send(notification())).toEqual({ ok: false, retry: true, error: 'channel "": unexpected status code 500: upstream says no' });
    status = 400;
    expect(await slackI!.send(notification())).toMatchObject({ ok: false, retry: false });
    status = 429;
    expect(await slackI!.send(notification())).toMatchObject({ ok: false, retry: false });
    expect(await webhook!.send(notification())).toMatchObject({ ok: false, retry: true });
    expect(await pagerduty!.send(notification())).toMatchObject({ ok: false, retry: true, error: 'unexpected status code 429: upstream says no' });
    await s.close();
  });

  it('a template error fails the send for good, with the engine’s message', async () => {
    const s = await recorder(() => [200, '']);
    const [i] = integrations(`    discord_configs:\n      - webhook_url: ${s.url}/d\n        title: '{{ template "nope" . }}'\n`);
    const a = await i!.send(notification());
    expect(a).toMatchObject({ ok: false, retry: false });
    expect(a.error).toMatch(/no such template "nope"/);
    expect(s.seen).toHaveLength(0);
    await s.close();
  });
});

describe('http_config', () => {
  let tls: { cert: string; key: string };
  beforeAll(async () => {
    tls = await generateSelfSigned('receiver-test');
    writeFileSync(join(dir, 'ca.pem'), tls.cert);
  });

  it('tls_config.ca_file makes a private CA trusted; without it the certificate is refused', async () => {
    const s = await recorder(() => [200, 'ok'], tls);
    const [withCa] = integrations(`    slack_configs:\n      - api_url: ${s.url}/a\n        http_config:\n          tls_config:\n            ca_file: ca.pem\n`);
    expect(await withCa!.send(notification())).toMatchObject({ ok: true });
    const [without] = integrations(`    slack_configs:\n      - api_url: ${s.url}/b\n`);
    const a = await without!.send(notification());
    expect(a).toMatchObject({ ok: false, retry: true });
    expect(a.error).toMatch(/self.signed|certificate/i);
    expect(s.seen.map((r) => r.url)).toEqual(['/a']);
    await s.close();
  });

  it('basic auth reads password_file at each send (a rotated secret is used at once)', async () => {
    const s = await recorder(() => [200, '']);
    writeFileSync(join(dir, 'pw'), 'first\n');
    const [i] = integrations(`    webhook_configs:\n      - url: ${s.url}/h\n        http_config:\n          basic_auth:\n            username: am\n            password_file: pw\n`);
    await i!.send(notification());
    writeFileSync(join(dir, 'pw'), 'second\n');
    await i!.send(notification());
    const creds = s.seen.map((r) => Buffer.from(String(r.headers.authorization).slice(6), 'base64').toString());
    expect(creds).toEqual(['am:first', 'am:second']);
    await s.close();
  });

  it('proxy_url: requests tunnel through the proxy (CONNECT), which the egress policy checks like any destination', async () => {
    const s = await recorder(() => [200, '']);
    const tunnels: string[] = [];
    const proxy = createServer();
    proxy.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
      tunnels.push(String(req.url));
      const [host, port] = String(req.url).split(':');
      const upstream = connect(Number(port), host!, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', () => client.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const proxyPort = (proxy.address() as AddressInfo).port;
    const [i] = integrations(`    webhook_configs:\n      - url: ${s.url}/via-proxy\n        http_config:\n          proxy_url: http://127.0.0.1:${proxyPort}\n`);
    expect(await i!.send(notification())).toMatchObject({ ok: true });
    expect(tunnels).toEqual([`127.0.0.1:${s.port}`]);
    expect(s.seen[0]!.url).toBe('/via-proxy');
    // A proxy the policy refuses (loopback-only here) is an error, not a bypass.
    const [j] = integrations(`    webhook_configs:\n      - url: ${s.url}/x\n        http_config:\n          proxy_url: http://198.51.100.7:3128\n`);
    const a = await j!.send(notification());
    expect(a).toMatchObject({ ok: false, retry: false });
    expect(a.error).toMatch(/egress refused/);
    await new Promise((r) => proxy.close(r));
    await s.close();
  });

  it('oauth2: a client-credentials token is fetched once, kept, and sent as the bearer', async () => {
    const s = await recorder((r) => (r.url === '/token' ? [200, '{"access_token":"tok-9","token_type":"Bearer","expires_in":3600}'] : [200, '']));
    const [i] = integrations(
      `    webhook_configs:\n      - url: ${s.url}/hook\n        http_config:\n          oauth2:\n            client_id: am\n            client_secret: s3\n            token_url: ${s.url}/token\n            scopes: [alerts, write]\n            endpoint_params:\n              audience: hooks\n`,
    );
    await i!.send(notification());
    await i!.send(notification());
    expect(s.seen.map((r) => r.url)).toEqual(['/token', '/hook', '/hook']);
    expect(s.seen[0]!.headers.authorization).toBe(`Basic ${Buffer.from('am:s3').toString('base64')}`);
    expect(Object.fromEntries(new URLSearchParams(s.seen[0]!.body))).toEqual({ grant_type: 'client_credentials', scope: 'alerts write', audience: 'hooks' });
    expect(s.seen[1]!.headers.authorization).toBe('Bearer tok-9');
    // 0.25 sends its own User-Agent on the token request too (the receivers differential checks it).
    expect(s.seen.map((r) => r.headers['user-agent'])).toEqual(['Alertmanager/0.25.0', 'Alertmanager/0.25.0', 'Alertmanager/0.25.0']);
    await s.close();
  });

  it('follows redirects unless follow_redirects is false', async () => {
    const s = await recorder((r) => (r.url === '/old' ? [307, ''] : [200, '']));
    // The recorder cannot set Location through its answer; wrap it.
    const redirecting = createServer((req, res) => {
      if (req.url === '/old') return void res.writeHead(307, { location: `${s.url}/new` }).end();
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => redirecting.listen(0, '127.0.0.1', r));
    const from = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}/old`;
    const [follows] = integrations(`    webhook_configs:\n      - url: ${from}\n`);
    expect(await follows!.send(notification())).toMatchObject({ ok: true });
    expect(s.seen.map((r) => [r.method, r.url, r.body.length > 0])).toEqual([['POST', '/new', true]]);
    const [stays] = integrations(`    webhook_configs:\n      - url: ${from}\n        http_config:\n          follow_redirects: false\n`);
    expect(await stays!.send(notification())).toMatchObject({ ok: false, retry: false, error: 'unexpected status code 307' });
    await new Promise((r) => redirecting.close(r));
    await s.close();
  });

  it('pagerduty v1 (service_key) goes to the generic events API, through the egress address map', async () => {
    const s = await recorder(() => [200, '{"status":"success"}'], tls);
    const mapped = new Egress({ loopbackOnly: true, addressMap: { 'events.pagerduty.com:443': `127.0.0.1:${s.port}` } });
    const c = loadConfig(`route:\n  receiver: r\nreceivers:\n  - name: r\n    pagerduty_configs:\n      - service_key: sk-1\n        http_config:\n          tls_config:\n            insecure_skip_verify: true\n`, dir);
    const [i] = buildIntegrations(c.tree.receivers, mapped).get('r')!;
    expect(await i!.send(notification())).toMatchObject({ ok: true });
    expect(s.seen[0]!.url).toBe('/generic/2010-04-15/create_event.json');
    const body = JSON.parse(s.seen[0]!.body) as Record<string, unknown>;
    expect(body).toMatchObject({ service_key: 'sk-1', event_type: 'trigger', description: '[FIRING:2] DiskFull ', client: 'Alertmanager', client_url: 'http://am:9093/#/alerts?receiver=r' });
    expect(body.incident_key).toMatch(/^[0-9a-f]{64}$/);
    expect(Object.keys(body.details as object).sort()).toEqual(['firing', 'num_firing', 'num_resolved', 'resolved']);
    await mapped.close();
    await s.close();
  });
});

describe('pagerduty events as 0.25 builds them', () => {
  it('v2: severity is "error" when the configuration leaves it empty, rendered when set', async () => {
    const s = await recorder(() => [202, '{}']);
    const [plain, set] = integrations(`    pagerduty_configs:\n      - url: ${s.url}/a\n        routing_key: k\n      - url: ${s.url}/b\n        routing_key: k\n        severity: '{{ .CommonLabels.alertname }}'\n`);
    await plain!.send(notification());
    await set!.send(notification());
    const severity = s.seen.map((r) => (JSON.parse(r.body) as { payload: { severity: string } }).payload.severity);
    expect(severity).toEqual(['error', 'DiskFull']);
    await s.close();
  });

  it('v1: a resolve event carries the details (client and client_url stay trigger-only)', async () => {
    const s = await recorder(() => [200, '{"status":"success"}'], await generateSelfSigned('pd-v1'));
    const mapped = new Egress({ loopbackOnly: true, addressMap: { 'events.pagerduty.com:443': `127.0.0.1:${s.port}` } });
    const c = loadConfig(`route:\n  receiver: r\nreceivers:\n  - name: r\n    pagerduty_configs:\n      - service_key: sk-1\n        http_config:\n          tls_config:\n            insecure_skip_verify: true\n`, dir);
    const [i] = buildIntegrations(c.tree.receivers, mapped).get('r')!;
    expect(await i!.send(notification([alert('db1', true)]))).toMatchObject({ ok: true });
    const body = JSON.parse(s.seen[0]!.body) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['service_key', 'incident_key', 'event_type', 'description', 'event_action', 'payload', 'details']);
    expect(body).toMatchObject({ event_type: 'resolve', details: { num_firing: '0', num_resolved: '1', firing: '' } });
    await mapped.close();
    await s.close();
  });

  it('an event over 512 kB has its details replaced by a note; a key that renders empty is refused', async () => {
    const s = await recorder(() => [202, '{}']);
    const [big, nokey] = integrations(
      `    pagerduty_configs:\n      - url: ${s.url}/a\n        routing_key: k\n        details:\n          huge: '${'y'.repeat(520_000)}'\n      - url: ${s.url}/b\n        routing_key: '{{ .CommonLabels.nothing }}'\n`,
    );
    expect(await big!.send(notification())).toMatchObject({ ok: true });
    const body = JSON.parse(s.seen[0]!.body) as { payload: { custom_details: unknown; summary: string } };
    expect(body.payload.custom_details).toEqual({ error: 'Custom details have been removed because the original event exceeds the maximum size of 512KB' });
    expect(body.payload.summary).toBe('[FIRING:2] DiskFull ');
    expect(await nokey!.send(notification())).toEqual({ ok: false, retry: false, error: 'routing key cannot be empty' });
    expect(s.seen).toHaveLength(1);
    await s.close();
  });
});

describe('User-Agent per integration, as 0.25 sends it', () => {
  it('Alertmanager/0.25.0 on its own requests, Go’s default from Telegram’s library, the AWS SDK’s from SNS', async () => {
    const s = await recorder((r) => [200, r.url.startsWith('/tg') ? '{"ok":true}' : '{}']);
    const list = integrations(
      `    webhook_configs:\n      - url: ${s.url}/hook\n    telegram_configs:\n      - api_url: ${s.url}/tg\n        bot_token: bt\n        chat_id: 7\n    sns_configs:\n      - api_url: ${s.url}/sns\n        topic_arn: arn:aws:sns:eu-west-1:1:t\n        sigv4:\n          region: eu-west-1\n          access_key: AKID\n          secret_key: SECRET\n`,
    );
    for (const i of list) expect(await i.send(notification())).toMatchObject({ ok: true });
    const ua = Object.fromEntries(s.seen.map((r) => [r.url.split('/')[1], r.headers['user-agent']]));
    const goArch = { x64: 'amd64', arm64: 'arm64' }[process.arch as string] ?? process.arch;
    expect(ua).toEqual({ hook: 'Alertmanager/0.25.0', tg: 'Go-http-client/1.1', sns: `aws-sdk-go/1.44.133 (go1.19.8; ${process.platform}; ${goArch})` });
    await s.close();
  });
});

/** The hash constructor Smithy's signer takes, on node:crypto (HMAC when given a secret). */
describe('sns', () => {
  const snsConfig = (url: string, extra: string) => `    sns_configs:\n      - api_url: ${url}/sns\n        sigv4:\n          region: eu-west-1\n          access_key: AKID\n          secret_key: SECRET\n${extra}`;

  it('sends an empty MessageAttributes= without attributes, the subject uncut, and a message cut on its byte limit', async () => {
    const s = await recorder(() => [200, '<PublishResponse/>']);
    const longSubject = `{{ template "__subject" . }}${'s'.repeat(150)}`;
    const [topic, phone] = integrations(
      snsConfig(s.url, `        topic_arn: arn:aws:sns:eu-west-1:1:t\n        subject: '${longSubject}'\n`) +
        `      - api_url: ${s.url}/sms\n        phone_number: '+15550100'\n        sigv4:\n          region: eu-west-1\n          access_key: AKID\n          secret_key: SECRET\n        message: '${'a'.repeat(1599)}é tail'\n`,
    );
    expect(await topic!.send(notification())).toMatchObject({ ok: true });
    expect(await phone!.send(notification())).toMatchObject({ ok: true });
    const [t, p] = s.seen.map((r) => r.body);
    expect(t).toMatch(/&MessageAttributes=&Subject=/);
    expect(new URLSearchParams(t).get('Subject')).toBe(`[FIRING:2] DiskFull ${'s'.repeat(150)}`);
    // The 1,600th byte is the first of "é": 0.25 cuts there, inside the character.
    expect(p).toContain(`&Message=${'a'.repeat(1599)}%C3&MessageAttributes.entry.1.Name=truncated&MessageAttributes.entry.1.Value.DataType=String&MessageAttributes.entry.1.Value.StringValue=true&PhoneNumber=%2B15550100&Subject=`);
    await s.close();
  });

  it('takes the region from sigv4.region or AWS_REGION, never from the topic ARN', async () => {
    const [i] = integrations(`    sns_configs:\n      - api_url: http://127.0.0.1:1/\n        topic_arn: arn:aws:sns:eu-west-1:1:t\n        sigv4:\n          access_key: AKID\n          secret_key: SECRET\n`);
    const saved = process.env.AWS_REGION;
    delete process.env.AWS_REGION;
    try {
      expect(await i!.send(notification())).toEqual({ ok: false, retry: true, error: 'region not configured in sns.sigv4.region or in default credentials chain' });
    } finally {
      if (saved !== undefined) process.env.AWS_REGION = saved;
    }
  });

  it('signs Publish with SigV4 as the AWS SDK’s own signer computes it', async () => {
    const s = await recorder(() => [200, '<PublishResponse/>']);
    const [i] = integrations(
      `    sns_configs:\n      - api_url: ${s.url}/sns\n        topic_arn: arn:aws:sns:eu-west-1:1:alerts.fifo\n        sigv4:\n          region: eu-west-1\n          access_key: AKID\n          secret_key: SECRET\n`,
    );
    expect(await i!.send(notification())).toMatchObject({ ok: true });
    const r = s.seen[0]!;
    const params = new URLSearchParams(r.body);
    expect(params.get('Action')).toBe('Publish');
    expect(params.get('TopicArn')).toBe('arn:aws:sns:eu-west-1:1:alerts.fifo');
    expect(params.get('MessageGroupId')).toMatch(/^[0-9a-f]{64}$/);
    const amzDate = String(r.headers['x-amz-date']);
    const when = new Date(`${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`);
    const signer = new SignatureV4({ service: 'sns', region: 'eu-west-1', credentials: { accessKeyId: 'AKID', secretAccessKey: 'SECRET' }, sha256: Sha256, applyChecksum: false });
    const signed = await signer.sign(
      {
        method: 'POST',
        protocol: 'http:',
        hostname: '127.0.0.1',
        port: s.port,
        path: '/sns/',
        headers: { host: `127.0.0.1:${s.port}`, 'content-type': String(r.headers['content-type']), 'content-length': String(r.headers['content-length']) },
        body: r.body,
      },
      { signingDate: when },
    );
    expect(r.headers.authorization).toBe(signed.headers.authorization);
    await s.close();
  });

  it('refuses profile/role_arn credentials with a message instead of sending unsigned', async () => {
    const [i] = integrations(`    sns_configs:\n      - api_url: http://127.0.0.1:1/\n        topic_arn: arn:aws:sns:eu-west-1:1:t\n        sigv4:\n          profile: prod\n`);
    expect(await i!.send(notification())).toMatchObject({ ok: false, retry: false, error: expect.stringMatching(/profile and role_arn are not supported/) });
  });
});

describe('email', () => {
  let tls: { cert: string; key: string };
  beforeAll(async () => {
    tls = await generateSelfSigned('smtp-test');
  });

  async function smtpSink(opts: { mechanisms?: string[]; starttls?: boolean }) {
    const mails: { raw: string; user?: string; method?: string; secure: boolean }[] = [];
    const server = new SMTPServer({
      authMethods: opts.mechanisms ?? ['PLAIN', 'LOGIN'],
      authOptional: true,
      allowInsecureAuth: true,
      ...(opts.starttls ? { key: tls.key, cert: tls.cert } : { disabledCommands: ['STARTTLS'] }),
      onAuth(auth, _session, cb) {
        const ok = auth.method === 'CRAM-MD5' ? auth.validatePassword!('crammed') : auth.password === 'pw';
        cb(ok ? null : new Error('bad credentials'), ok ? { user: `${auth.username}/${auth.method}` } : undefined);
      },
      onData(stream, session, cb) {
        let raw = '';
        stream.on('data', (c: Buffer) => (raw += c));
        stream.on('end', () => {
          const [user, method] = String(session.user ?? '').split('/');
          mails.push({ raw, user: user || undefined, method, secure: session.secure });
          cb();
        });
      },
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    return { mails, port: (server.server.address() as AddressInfo).port, close: () => new Promise<void>((r) => server.close(() => r())) };
  }

  const emailConfig = (port: number, extra: string) => `    email_configs:\n      - to: ops@example.com\n        from: am@example.com\n        smarthost: 127.0.0.1:${port}\n${extra}`;

  it('authenticates with the first offered mechanism that has its credential (CRAM-MD5, PLAIN, LOGIN)', async () => {
    for (const [mechanisms, extra, want] of [
      [['CRAM-MD5', 'PLAIN'], "        auth_username: ann\n        auth_secret: crammed\n", 'CRAM-MD5'],
      [['CRAM-MD5', 'PLAIN'], "        auth_username: ann\n        auth_password: pw\n", 'PLAIN'],
      [['LOGIN'], "        auth_username: ann\n        auth_password: pw\n", 'LOGIN'],
    ] as const) {
      const sink = await smtpSink({ mechanisms: [...mechanisms] });
      const [i] = integrations(emailConfig(sink.port, `        require_tls: false\n${extra}`));
      expect(await i!.send(notification()), want).toMatchObject({ ok: true });
      expect(sink.mails[0]).toMatchObject({ user: 'ann', method: want });
      await sink.close();
    }
  });

  it('require_tls (the default) upgrades with STARTTLS, and fails plainly against a server without it', async () => {
    const secure = await smtpSink({ starttls: true });
    const [i] = integrations(emailConfig(secure.port, '        tls_config:\n          insecure_skip_verify: true\n'));
    expect(await i!.send(notification())).toMatchObject({ ok: true });
    expect(secure.mails[0]!.secure).toBe(true);
    await secure.close();
    const plain = await smtpSink({});
    const [j] = integrations(emailConfig(plain.port, ''));
    const a = await j!.send(notification());
    expect(a).toEqual({ ok: false, retry: true, error: `'require_tls' is true (default) but "127.0.0.1:${plain.port}" does not advertise the STARTTLS extension` });
    expect(plain.mails).toHaveLength(0);
    await plain.close();
  });

  it('STARTTLS trusts tls_config.ca_file under server_name and shows the client certificate; PLAIN carries auth_identity; MAIL FROM as Go words it', async () => {
    const pki = await createTestCa();
    const srv = await pki.server(['smtp.example']);
    const client = await pki.client('am-client');
    for (const [name, text] of [['ca.pem', pki.ca], ['client.pem', client.cert], ['client.key', client.key]] as const) writeFileSync(join(dir, name), text);
    const seen: { authzid?: string; user?: string; mailArgs?: unknown; peer?: string; commands: string[] } = { commands: [] };
    const log = (_m: unknown, f: string, ...a: unknown[]) => void (f === 'C:' && seen.commands.push(String(a[0])));
    const logger = { trace: log, debug: log, info: () => undefined, warn: () => undefined, error: () => undefined, fatal: () => undefined, child: () => logger };
    const server = new SMTPServer({
      key: srv.key,
      cert: srv.cert,
      requestCert: true,
      rejectUnauthorized: false,
      authMethods: ['PLAIN'],
      authOptional: true,
      logger: logger as never,
      onSecure(socket, _s, cb) {
        seen.peer = String((socket as import('node:tls').TLSSocket).getPeerCertificate().subject?.CN);
        cb();
      },
      onAuth(auth, _s, cb) {
        seen.authzid = (auth as { authzid?: string }).authzid;
        seen.user = auth.username;
        cb(null, { user: auth.username });
      },
      onMailFrom(address, _s, cb) {
        seen.mailArgs = address.args;
        cb();
      },
      onData(stream, _s, cb) {
        stream.resume();
        stream.on('end', () => cb());
      },
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.server.address() as AddressInfo).port;
    const tlsCfg = `        tls_config:\n          ca_file: ${join(dir, 'ca.pem')}\n          cert_file: ${join(dir, 'client.pem')}\n          key_file: ${join(dir, 'client.key')}\n`;
    const auth = '        auth_username: ann\n        auth_password: pw\n        auth_identity: ops\n';
    const [good] = integrations(emailConfig(port, `${auth}${tlsCfg}          server_name: smtp.example\n`));
    expect(await good!.send(notification())).toMatchObject({ ok: true });
    expect(seen).toMatchObject({ authzid: 'ops', user: 'ann', mailArgs: { BODY: '8BITMIME', SMTPUTF8: true }, peer: 'am-client' });
    expect(seen.commands.filter((c) => /^(EHLO|STARTTLS|MAIL)/.test(c))).toEqual(['EHLO localhost', 'STARTTLS', 'EHLO localhost', 'MAIL FROM:<am@example.com> BODY=8BITMIME SMTPUTF8']);
    // Without server_name the certificate (made for smtp.example) does not match 127.0.0.1.
    const [wrongName] = integrations(emailConfig(port, `${auth}${tlsCfg}`));
    expect(await wrongName!.send(notification())).toMatchObject({ ok: false, retry: true, error: expect.stringMatching(/IP: 127\.0\.0\.1 is not in the cert's list/) });
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('auth_password_file wins over auth_password and is used byte for byte, as 0.25 reads it', async () => {
    writeFileSync(join(dir, 'pw-exact'), 'pw');
    writeFileSync(join(dir, 'pw-newline'), 'pw\n');
    const sink = await smtpSink({ mechanisms: ['PLAIN'] });
    const [exact, newline] = integrations(
      emailConfig(sink.port, `        require_tls: false\n        auth_username: ann\n        auth_password: wrong\n        auth_password_file: ${join(dir, 'pw-exact')}\n`) +
        `      - to: ops@example.com\n        from: am@example.com\n        smarthost: 127.0.0.1:${sink.port}\n        require_tls: false\n        auth_username: ann\n        auth_password_file: ${join(dir, 'pw-newline')}\n`,
    );
    expect(await exact!.send(notification())).toMatchObject({ ok: true });
    expect(await newline!.send(notification())).toMatchObject({ ok: false, retry: true, error: expect.stringMatching(/535|[Aa]uthentication|credentials/) });
    expect(sink.mails).toHaveLength(1);
    await sink.close();
  });

  it('PLAIN is refused in the clear to anything but localhost, as Go refuses it', async () => {
    const sink = await smtpSink({ mechanisms: ['PLAIN'] });
    const mapped = new Egress({ loopbackOnly: true, addressMap: { 'mail.example:2525': `127.0.0.1:${sink.port}` } });
    const c = loadConfig(`route:\n  receiver: r\nreceivers:\n  - name: r\n${emailConfig(0, '        require_tls: false\n        auth_username: ann\n        auth_password: pw\n').replace('127.0.0.1:0', 'mail.example:2525')}`, dir);
    const [i] = buildIntegrations(c.tree.receivers, mapped).get('r')!;
    expect(await i!.send(notification())).toMatchObject({ ok: false, retry: true, error: expect.stringContaining('*smtp.plainAuth auth: unencrypted connection') });
    expect(sink.mails).toHaveLength(0);
    await mapped.close();
    await sink.close();
  });

  it('the default e-mail: subject line, Date and Message-Id, an HTML part with escaped values', async () => {
    const sink = await smtpSink({});
    const [i] = integrations(emailConfig(sink.port, '        require_tls: false\n'));
    expect(await i!.send(notification([alert('db<1>')]))).toMatchObject({ ok: true });
    const m = parseMail(sink.mails[0]!.raw);
    expect(m.headers.subject).toBe('[FIRING:1] DiskFull (db<1>)');
    expect(m.headers.to).toBe('ops@example.com');
    expect(m.headers.date).toMatch(/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} \+0000$/);
    expect(m.headers['message-id']).toMatch(/^<\d+\.\d+@.+>$/);
    expect(m.parts.map((p) => p.type)).toEqual(['text/html']);
    expect(m.parts[0]!.body).toContain('instance = db&lt;1&gt;<br');
    await sink.close();
  });
});
