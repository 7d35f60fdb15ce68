/**
 * telegram_configs: the Bot API's sendMessage (`api_url/bot<token>/sendMessage`), parameters as a
 * JSON object of strings (chat_id, text, parse_mode, disable_web_page_preview, and
 * disable_notification when set). With `parse_mode: HTML` the message is rendered with HTML escaping
 * of every value, as 0.25 renders it with html/template; cut at 4,096 runes. The Bot API answers
 * `{"ok": true, ...}` on success; anything else is an error worth retrying. The request is built by
 * 0.25's Telegram library, not by Alertmanager: it carries Go's default User-Agent.
 */
import { goJsonLabelSetSorted } from '../api/json.js';
import { GO_USER_AGENT, HttpClient, sendError, urlOf } from './http.js';
import { expander } from './template-text.js';
import { DELIVERED, failed, truncate, type Attempt, type Integration, type Notification, timeLeft } from './types.js';

type Obj = Record<string, any>;

export function telegramIntegration(c: Obj, index: number, http: HttpClient): Integration {
  return {
    kind: 'telegram',
    index,
    sendResolved: c.send_resolved !== false,
    async send(n: Notification): Promise<Attempt> {
      const t = expander(n, { html: c.parse_mode === 'HTML' });
      const params: Record<string, string> = {
        chat_id: String(c.chat_id),
        text: truncate(t(c.message), 4096),
        disable_web_page_preview: 'true',
      };
      if (c.disable_notifications) params.disable_notification = 'true';
      if (c.parse_mode) params.parse_mode = c.parse_mode;
      // 0.25 does not look at telegram's template error: the message goes out with the text that failed empty.
      try {
        const r = await http.postJson(`${urlOf(c.api_url).replace(/\/$/, '')}/bot${c.bot_token}/sendMessage`, goJsonLabelSetSorted(params) + '\n', timeLeft(n), { 'User-Agent': GO_USER_AGENT });
        let answer: { ok?: boolean; description?: string; error_code?: number } = {};
        try {
          answer = JSON.parse(r.text) as typeof answer;
        } catch {
          // not JSON
        }
        if (answer.ok === true) return DELIVERED;
        return failed(`telegram: ${answer.description ?? `unexpected answer (status ${r.status})`}`, true);
      } catch (e) {
        return sendError(e);
      }
    },
  };
}
