/**
 * pushover_configs: Pushover's message API, the parameters in the query string of a POST with an
 * empty text body (as 0.25 sends them): token, user, title (250 runes), message (1,024 runes,
 * trimmed, `(no details)` when empty), url (512 runes), url_title, html, priority, retry and expire
 * in seconds, sound. `api_url` (a ctl addition) points it elsewhere, e.g. at a test double.
 */
import { checkAnswer, HttpClient, sendError } from './http.js';
import { expander } from './template-text.js';
import { failed, truncate, type Attempt, type Integration, type Notification, timeLeft } from './types.js';

type Obj = Record<string, any>;

const API_URL = 'https://api.pushover.net/1/messages.json';

/** url.Values.Encode: keys sorted, QueryEscape'd (space as +). */
export function goQueryEncode(params: [string, string][]): string {
  const esc = (s: string) => encodeURIComponent(s).replace(/%20/g, '+').replace(/[!'()*]/g, (ch) => '%' + ch.charCodeAt(0).toString(16).toUpperCase());
  return [...params]
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([k, v]) => `${esc(k)}=${esc(v)}`)
    .join('&');
}

export function pushoverIntegration(c: Obj, index: number, http: HttpClient): Integration {
  return {
    kind: 'pushover',
    index,
    sendResolved: c.send_resolved !== false,
    async send(n: Notification): Promise<Attempt> {
      const t = expander(n);
      // With `html: true` the message (only) is rendered as html/template renders it, as 0.25 does.
      const m = c.html ? expander(n, { html: true }) : t;
      const message = truncate(m(c.message), 1024).trim() || '(no details)';
      const params: [string, string][] = [
        ['token', t(c.token)],
        ['user', t(c.user_key)],
        ['title', truncate(t(c.title), 250)],
        ['message', message],
        ['url', truncate(t(c.url), 512)],
        ['url_title', t(c.url_title)],
      ];
      if (c.html) params.push(['html', '1']);
      params.push(['priority', t(c.priority)], ['retry', String(Math.trunc(Number(c.retry ?? 0) / 1000))], ['expire', String(Math.trunc(Number(c.expire ?? 0) / 1000))], ['sound', t(c.sound)]);
      if (t.error || m.error) return failed((t.error ?? m.error)!, false);
      const url = new URL(c.api_url || API_URL);
      url.search = goQueryEncode(params);
      try {
        return checkAnswer(await http.request('POST', url.href, undefined, { 'Content-Type': 'text/plain' }, timeLeft(n)));
      } catch (e) {
        return sendError(e);
      }
    },
  };
}
