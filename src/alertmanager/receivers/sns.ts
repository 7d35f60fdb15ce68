/**
 * sns_configs: Amazon SNS Publish (query protocol, form-encoded, SigV4-signed) to a topic, a
 * target or a phone number, as 0.25 sends it through the AWS SDK for Go: credentials from `sigv4`
 * (access_key and secret_key together) or the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
 * AWS_SESSION_TOKEN); the region from `sigv4.region`, else AWS_REGION (never from the topic ARN);
 * the SDK's User-Agent. The message is cut at 256 KiB (1,600 bytes for a phone number) on a byte,
 * as 0.25 cuts it, and then carries a `truncated` attribute; the subject is sent as rendered; the
 * attributes are `MessageAttributes.entry.N` in name order, or an empty `MessageAttributes=` when
 * there are none (the SDK's encoding of an empty map); FIFO topics get the group key's hash as
 * deduplication and group id. `profile` and `role_arn` need the AWS SDK's credential chain, which
 * ctl does not carry: such a receiver fails with a message saying so.
 */
import { arch, platform } from 'node:os';
import { checkAnswer, HttpClient, sendError } from './http.js';
import { signV4 } from './sigv4.js';
import { expander } from './template-text.js';
import { failed, groupKeyHash, timeLeft, type Attempt, type Integration, type Notification } from './types.js';

type Obj = Record<string, any>;

const MAX_MESSAGE_BYTES = 256 * 1024;
const MAX_SMS_BYTES = 1600;

const GO_ARCH: Record<string, string> = { x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64' };
/** The SDK's User-Agent as 0.25 (Debian's build: aws-sdk-go 1.44.133, Go 1.19.8) sends it on this platform. */
export const AWS_SDK_USER_AGENT = `aws-sdk-go/1.44.133 (go1.19.8; ${platform()}; ${GO_ARCH[arch()] ?? arch()})`;

/** url.Values.Encode over byte values: keys sorted, QueryEscape of every byte (a cut message may end inside a character). */
function formEncode(params: [string, Buffer][]): string {
  const esc = (b: Buffer) => {
    let out = '';
    for (const byte of b) {
      const c = String.fromCharCode(byte);
      if (/[A-Za-z0-9\-_.~]/.test(c)) out += c;
      else if (c === ' ') out += '+';
      else out += '%' + byte.toString(16).toUpperCase().padStart(2, '0');
    }
    return out;
  };
  return [...params]
    .sort((a, b) => Buffer.compare(Buffer.from(a[0]), Buffer.from(b[0])))
    .map(([k, v]) => `${esc(Buffer.from(k))}=${esc(v)}`)
    .join('&');
}

export function snsIntegration(c: Obj, index: number, http: HttpClient): Integration {
  return {
    kind: 'sns',
    index,
    sendResolved: c.send_resolved !== false,
    async send(n: Notification): Promise<Attempt> {
      const sig = (c.sigv4 ?? {}) as Obj;
      if (sig.profile || sig.role_arn) return failed('sns: sigv4 profile and role_arn are not supported by ctl; set access_key and secret_key (or the AWS_* environment)', false);
      const both = Boolean(sig.access_key && sig.secret_key);
      const accessKey = both ? sig.access_key : process.env.AWS_ACCESS_KEY_ID || '';
      const secretKey = both ? sig.secret_key : process.env.AWS_SECRET_ACCESS_KEY || '';
      if (!accessKey || !secretKey) return failed('sns: no AWS credentials (sigv4.access_key/secret_key or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY)', false);
      const sessionToken = both ? undefined : process.env.AWS_SESSION_TOKEN;
      const region = sig.region || process.env.AWS_REGION || '';
      if (!region) return failed('region not configured in sns.sigv4.region or in default credentials chain', true);
      const t = expander(n);
      const apiUrl = t(c.api_url);
      const params: [string, Buffer][] = [];
      const param = (k: string, v: string | Buffer) => params.push([k, typeof v === 'string' ? Buffer.from(v) : v]);
      param('Action', 'Publish');
      param('Version', '2010-03-31');
      const attributes: Record<string, string> = {};
      for (const [k, v] of Object.entries((c.attributes ?? {}) as Record<string, string>)) attributes[t(k)] = t(v);
      if (c.topic_arn) {
        const topic = t(c.topic_arn);
        param('TopicArn', topic);
        if (topic.endsWith('.fifo')) {
          param('MessageDeduplicationId', groupKeyHash(n.groupKey));
          param('MessageGroupId', groupKeyHash(n.groupKey));
        }
      }
      let limit = MAX_MESSAGE_BYTES;
      if (c.phone_number) {
        param('PhoneNumber', t(c.phone_number));
        limit = MAX_SMS_BYTES;
      }
      if (c.target_arn) param('TargetArn', t(c.target_arn));
      const message = Buffer.from(t(c.message));
      if (message.length > limit) attributes.truncated = 'true';
      param('Message', message.subarray(0, limit));
      const names = Object.keys(attributes).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
      if (names.length === 0) param('MessageAttributes', '');
      names.forEach((k, i) => {
        const p = `MessageAttributes.entry.${i + 1}`;
        param(`${p}.Name`, k);
        param(`${p}.Value.DataType`, 'String');
        param(`${p}.Value.StringValue`, attributes[k]!);
      });
      if (c.subject) param('Subject', t(c.subject));
      if (t.error) return failed(t.error, false);
      const url = new URL(apiUrl || `https://sns.${region}.amazonaws.com/`);
      // The operation's path `/` is appended to the endpoint's, as the AWS SDK does.
      if (!url.pathname.endsWith('/')) url.pathname += '/';
      const body = formEncode(params);
      const headers = { 'Content-Length': String(Buffer.byteLength(body)), 'Content-Type': 'application/x-www-form-urlencoded; charset=utf-8' };
      const signed = signV4('POST', url, headers, body, region, 'sns', { accessKey, secretKey, sessionToken });
      try {
        // Throttling answers 400 with a Throttling code: worth a retry, as the AWS SDK retries it.
        const a = await http.request('POST', url.href, body, { ...headers, ...signed, 'User-Agent': AWS_SDK_USER_AGENT }, timeLeft(n));
        const r = checkAnswer(a);
        return !r.ok && /<Code>Throttl/.test(a.text) ? { ...r, retry: true } : r;
      } catch (e) {
        return sendError(e);
      }
    },
  };
}
