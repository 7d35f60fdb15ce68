/**
 * opsgenie_configs: Opsgenie's Alert API v2. While any alert fires, a create request (alias = the
 * group key's SHA-256) and, with `update_alerts`, message and description updates; once all are
 * resolved, a close request. Updates are PUTs. `Authorization: GenieKey <api_key>`; the message cut at 130 runes;
 * details are the common labels overlaid by the configured details; `teams` responders split.
 */
import { goJson, goJsonLabelSetSorted, RawJson } from '../api/json.js';
import { checkAnswer, HttpClient, sendError, secretOf, urlOf } from './http.js';
import { expander } from './template-text.js';
import { commonOf } from './template-text.js';
import { DELIVERED, failed, groupKeyHash, groupStatus, truncate, type Attempt, type Integration, type Notification, timeLeft } from './types.js';

type Obj = Record<string, any>;

/** 0.25's safeSplit: comma-separated, nothing trimmed; empty text, no items. */
const list = (s: string) => (s === '' ? [] : s.split(','));

export function opsgenieIntegration(c: Obj, index: number, http: HttpClient): Integration {
  return {
    kind: 'opsgenie',
    index,
    sendResolved: c.send_resolved !== false,
    async send(n: Notification): Promise<Attempt> {
      const t = expander(n);
      const alias = groupKeyHash(n.groupKey);
      const base = urlOf(c.api_url);
      const requests: { method: 'POST' | 'PUT'; url: string; body: string }[] = [];
      if (groupStatus(n.alerts) === 'resolved') {
        requests.push({ method: 'POST', url: `${base}v2/alerts/${alias}/close?identifierType=alias`, body: goJson({ source: t(c.source) }) });
      } else {
        const details = { ...commonOf(n.alerts, (a) => a.labels) };
        for (const [k, v] of Object.entries((c.details ?? {}) as Record<string, string>)) details[k] = t(v);
        const responders: Obj[] = [];
        for (const r of (c.responders ?? []) as Obj[]) {
          const one = { id: t(r.id), name: t(r.name), username: t(r.username), type: t(r.type) };
          if (!one.id && !one.name && !one.username && !one.type) continue;
          if (one.type === 'teams') {
            for (const team of list(one.name)) responders.push({ name: team, type: 'team' });
            continue;
          }
          responders.push({ id: one.id || undefined, name: one.name || undefined, username: one.username || undefined, type: one.type });
        }
        const tags = list(t(c.tags));
        const actions = list(t(c.actions));
        const msg = {
          alias,
          message: truncate(t(c.message), 130),
          description: t(c.description) || undefined,
          details: new RawJson(goJsonLabelSetSorted(details)),
          source: t(c.source),
          responders: responders.length > 0 ? responders : undefined,
          tags: tags.length > 0 ? tags : undefined,
          note: t(c.note) || undefined,
          priority: t(c.priority) || undefined,
          entity: t(c.entity) || undefined,
          actions: actions.length > 0 ? actions : undefined,
        };
        requests.push({ method: 'POST', url: `${base}v2/alerts`, body: goJson(msg) });
        if (c.update_alerts) {
          requests.push({ method: 'PUT', url: `${base}v2/alerts/${alias}/message?identifierType=alias`, body: goJson({ message: msg.message }) });
          requests.push({ method: 'PUT', url: `${base}v2/alerts/${alias}/description?identifierType=alias`, body: goJson({ description: msg.description }) });
        }
      }
      const key = t(secretOf(c.api_key, c.api_key_file));
      if (t.error) return failed(t.error, false);
      try {
        for (const r of requests) {
          const a = checkAnswer(await http.request(r.method, r.url, r.body + '\n', { 'Content-Type': 'application/json', Authorization: `GenieKey ${key}` }, timeLeft(n)), [429]);
          if (!a.ok) return a;
        }
        return DELIVERED;
      } catch (e) {
        return sendError(e);
      }
    },
  };
}
