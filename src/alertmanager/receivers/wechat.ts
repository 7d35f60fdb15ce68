/**
 * wechat_configs: WeChat Work's API. An access token is fetched (`gettoken`, corpid + corpsecret)
 * and kept for two hours; the message (text or markdown) goes to `message/send`. The answer's
 * errcode decides: 0 delivered, 42001 (token expired) forgets the token and retries, anything else
 * fails for good.
 */
import { goJson } from '../api/json.js';
import { HttpClient, sendError, urlOf } from './http.js';
import { goQueryEncode } from './pushover.js';
import { expander } from './template-text.js';
import { DELIVERED, failed, type Attempt, type Integration, type Notification, timeLeft } from './types.js';

type Obj = Record<string, any>;

const TOKEN_LIFETIME_MS = 2 * 3600_000;

export function wechatIntegration(c: Obj, index: number, http: HttpClient): Integration {
  let token = '';
  let tokenAt = 0;
  return {
    kind: 'wechat',
    index,
    sendResolved: c.send_resolved === true,
    async send(n: Notification): Promise<Attempt> {
      const t = expander(n);
      const base = urlOf(c.api_url);
      try {
        if (!token || Date.now() - tokenAt > TOKEN_LIFETIME_MS) {
          const q = goQueryEncode([
            ['corpsecret', t(c.api_secret)],
            ['corpid', t(c.corp_id)],
          ]);
          const r = await http.request('GET', `${base}gettoken?${q}`, undefined, {}, timeLeft(n));
          let got = '';
          try {
            got = String((JSON.parse(r.text) as { access_token?: string }).access_token ?? '');
          } catch {
            // not JSON: no token
          }
          if (!got) return failed(`invalid APISecret for CorpID: ${c.corp_id}`, true);
          token = got;
          tokenAt = Date.now();
        }
        const content = { content: t(c.message) };
        const markdown = c.message_type === 'markdown';
        const msg = {
          text: markdown ? { content: '' } : content,
          touser: t(c.to_user) || undefined,
          toparty: t(c.to_party) || undefined,
          totag: t(c.to_tag) || undefined,
          agentid: t(c.agent_id) || undefined,
          safe: '0',
          msgtype: c.message_type,
          markdown: markdown ? content : { content: '' },
        };
        if (t.error) return failed(t.error, false);
        const r = await http.postJson(`${base}message/send?${goQueryEncode([['access_token', token]])}`, goJson(msg) + '\n', timeLeft(n));
        if (r.status !== 200) return failed(`unexpected status code ${r.status}`, true);
        let answer: { errcode?: number; errmsg?: string } = {};
        try {
          answer = JSON.parse(r.text) as typeof answer;
        } catch {
          // an answer that is not JSON reads as errcode 0, as Go's decoder leaves the struct zero
        }
        if (!answer.errcode) return DELIVERED;
        if (answer.errcode === 42001) {
          token = '';
          return failed(answer.errmsg ?? 'access token expired', true);
        }
        return failed(answer.errmsg ?? `errcode ${answer.errcode}`, false);
      } catch (e) {
        return sendError(e);
      }
    },
  };
}
