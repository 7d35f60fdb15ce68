/**
 * slack_configs: one message with one attachment, from the configured (default) templates, POSTed to
 * the incoming-webhook URL (`api_url`, or read from `api_url_file` at send time). Fields, actions
 * and their order as 0.25 writes them; the title cut at 1,024 runes.
 */
import { goJson } from '../api/json.js';
import { checkAnswer, HttpClient, sendError, secretOf, urlOf } from './http.js';
import { expander } from './template-text.js';
import { failed, truncate, type Attempt, type Integration, type Notification, timeLeft } from './types.js';

type Obj = Record<string, any>;

export function slackIntegration(c: Obj, index: number, http: HttpClient): Integration {
  return {
    kind: 'slack',
    index,
    sendResolved: c.send_resolved === true,
    async send(n: Notification): Promise<Attempt> {
      const t = expander(n);
      const attachment = {
        title: truncate(t(c.title), 1024) || undefined,
        title_link: t(c.title_link) || undefined,
        pretext: t(c.pretext) || undefined,
        text: t(c.text),
        fallback: t(c.fallback),
        callback_id: t(c.callback_id),
        fields: c.fields?.length
          ? (c.fields as Obj[]).map((f) => ({ title: t(f.title) || undefined, value: t(f.value) || undefined, short: f.short ?? c.short_fields === true }))
          : undefined,
        actions: c.actions?.length
          ? (c.actions as Obj[]).map((a) => ({
              type: t(a.type) || undefined,
              text: t(a.text) || undefined,
              url: t(a.url) || undefined,
              style: t(a.style) || undefined,
              name: t(a.name) || undefined,
              value: t(a.value) || undefined,
              confirm: a.confirm
                ? { text: t(a.confirm.text) || undefined, title: t(a.confirm.title) || undefined, ok_text: t(a.confirm.ok_text) || undefined, dismiss_text: t(a.confirm.dismiss_text) || undefined }
                : undefined,
            }))
          : undefined,
        image_url: t(c.image_url) || undefined,
        thumb_url: t(c.thumb_url) || undefined,
        footer: t(c.footer),
        color: t(c.color) || undefined,
        mrkdwn_in: c.mrkdwn_in?.length ? c.mrkdwn_in : ['fallback', 'pretext', 'text'],
      };
      const req = {
        channel: t(c.channel) || undefined,
        username: t(c.username) || undefined,
        icon_emoji: t(c.icon_emoji) || undefined,
        icon_url: t(c.icon_url) || undefined,
        link_names: c.link_names === true ? true : undefined,
        attachments: [attachment],
      };
      if (t.error) return failed(t.error, false);
      try {
        const url = c.api_url ? urlOf(c.api_url) : secretOf(undefined, c.api_url_file);
        const a = checkAnswer(await http.postJson(url, goJson(req) + '\n', timeLeft(n)));
        return a.ok ? a : { ...a, error: `channel ${JSON.stringify(req.channel ?? '')}: ${a.error}` };
      } catch (e) {
        return sendError(e);
      }
    },
  };
}
