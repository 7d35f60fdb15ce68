/**
 * sns_configs: Amazon SNS Publish (query protocol, form-encoded, SigV4-signed) to a topic, a
 * target or a phone number. Credentials from `sigv4` (access_key/secret_key) or the environment
 * (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN); the region from `sigv4.region`,
 * else the topic ARN, else AWS_REGION. Messages over 256 KiB are cut and marked with a `truncated`
 * attribute; subjects are cut at 100 characters; FIFO topics get the group key's hash as
 * deduplication and group id. `profile` and `role_arn` need the AWS SDK's credential chain, which
 * ctl does not carry: such a receiver fails with a message saying so.
 */
import { checkAnswer, HttpClient, sendError } from './http.js';
import { goQueryEncode } from './pushover.js';
import { signV4 } from './sigv4.js';
import { expander } from './template-text.js';
import { failed, groupKeyHash, timeLeft, truncate, type Attempt, type Integration, type Notification } from './types.js';

type Obj = Record<string, any>;

const MAX_MESSAGE_BYTES = 256 * 1024;

function cutBytes(s: string, n: number): string {
  const b = Buffer.from(s);
  if (b.length <= n) return s;
  // Cut on a character boundary.
  return b.subarray(0, n).toString('utf8').replace(/\ufffd$/, '');
}

export function snsIntegration(c: Obj, index: number, http: HttpClient): Integration {
  return {
    kind: 'sns',
    index,
    sendResolved: c.send_resolved !== false,
    async send(n: Notification): Promise<Attempt> {
      const sig = (c.sigv4 ?? {}) as Obj;
      if (sig.profile || sig.role_arn) return failed('sns: sigv4 profile and role_arn are not supported by ctl; set access_key and secret_key (or the AWS_* environment)', false);
      const accessKey = sig.access_key || process.env.AWS_ACCESS_KEY_ID || '';
      const secretKey = sig.secret_key || process.env.AWS_SECRET_ACCESS_KEY || '';
      if (!accessKey || !secretKey) return failed('sns: no AWS credentials (sigv4.access_key/secret_key or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY)', false);
      const t = expander(n);
      const topic = t(c.topic_arn);
      const region = sig.region || (topic ? topic.split(':')[3] : '') || process.env.AWS_REGION || '';
      if (!region) return failed('sns: no region (sigv4.region, a topic ARN or AWS_REGION)', false);
      const params: [string, string][] = [
        ['Action', 'Publish'],
        ['Version', '2010-03-31'],
      ];
      const message = t(c.message);
      const cut = cutBytes(message, MAX_MESSAGE_BYTES);
      params.push(['Message', cut]);
      if (topic) {
        params.push(['TopicArn', topic]);
        if (topic.endsWith('.fifo')) params.push(['MessageDeduplicationId', groupKeyHash(n.groupKey)], ['MessageGroupId', groupKeyHash(n.groupKey)]);
      }
      if (c.phone_number) params.push(['PhoneNumber', t(c.phone_number)]);
      if (c.target_arn) params.push(['TargetArn', t(c.target_arn)]);
      if (!c.phone_number) params.push(['Subject', truncate(t(c.subject), 100)]);
      const attributes: Record<string, string> = {};
      for (const [k, v] of Object.entries((c.attributes ?? {}) as Record<string, string>)) attributes[t(k)] = t(v);
      if (cut !== message) attributes.truncated = 'true';
      Object.keys(attributes)
        .sort()
        .forEach((k, i) => {
          const p = `MessageAttributes.entry.${i + 1}`;
          params.push([`${p}.Name`, k], [`${p}.Value.DataType`, 'String'], [`${p}.Value.StringValue`, attributes[k]!]);
        });
      if (t.error) return failed(t.error, false);
      const url = new URL(c.api_url || `https://sns.${region}.amazonaws.com/`);
      // The operation's path `/` is appended to the endpoint's, as the AWS SDK does.
      if (!url.pathname.endsWith('/')) url.pathname += '/';
      const body = goQueryEncode(params);
      const headers = { 'Content-Length': String(Buffer.byteLength(body)), 'Content-Type': 'application/x-www-form-urlencoded; charset=utf-8' };
      const signed = signV4('POST', url, headers, body, region, 'sns', { accessKey, secretKey, sessionToken: process.env.AWS_SESSION_TOKEN });
      try {
        // Throttling answers 400 with a Throttling code: worth a retry, as the AWS SDK retries it.
        const a = await http.request('POST', url.href, body, { ...headers, ...signed }, timeLeft(n));
        const r = checkAnswer(a);
        return !r.ok && /<Code>Throttl/.test(a.text) ? { ...r, retry: true } : r;
      } catch (e) {
        return sendError(e);
      }
    },
  };
}
