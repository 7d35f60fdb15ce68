/**
 * pagerduty_configs: Events API v2 (`routing_key`) or the v1 generic API (`service_key`), with the
 * group key's SHA-256 as dedup/incident key, `trigger` while any alert fires and `resolve` after;
 * details, images and links from the configured templates; summaries cut at 1,024 runes. v2 retries
 * 429 and 5xx; v1 retries 403 (its rate limit) and 5xx.
 */
import { goJson, goJsonLabelSetSorted, RawJson } from '../api/json.js';
import { checkAnswer, HttpClient, sendError, secretOf, urlOf } from './http.js';
import { expander } from './template-text.js';
import { failed, groupKeyHash, groupStatus, truncate, type Attempt, type Integration, type Notification, timeLeft } from './types.js';

type Obj = Record<string, any>;

const V1_URL = 'https://events.pagerduty.com/generic/2010-04-15/create_event.json';

export function pagerdutyIntegration(c: Obj, index: number, http: HttpClient): Integration {
  return {
    kind: 'pagerduty',
    index,
    sendResolved: c.send_resolved !== false,
    async send(n: Notification): Promise<Attempt> {
      const t = expander(n);
      const resolved = groupStatus(n.alerts) === 'resolved';
      const details: Record<string, string> = {};
      for (const [k, v] of Object.entries((c.details ?? {}) as Record<string, string>)) details[k] = t(v);
      const key = groupKeyHash(n.groupKey);
      let body: string;
      let url: string;
      let retryCodes: number[];
      if (c.service_key || c.service_key_file) {
        url = V1_URL;
        retryCodes = [403];
        body = goJson({
          service_key: t(secretOf(c.service_key, c.service_key_file)) || undefined,
          incident_key: key,
          event_type: resolved ? 'resolve' : 'trigger',
          description: truncate(t(c.description), 1024) || undefined,
          event_action: '',
          payload: null,
          client: resolved ? undefined : t(c.client) || undefined,
          client_url: resolved ? undefined : t(c.client_url) || undefined,
          details: resolved || Object.keys(details).length === 0 ? undefined : new RawJson(goJsonLabelSetSorted(details)),
        });
      } else {
        url = urlOf(c.url);
        retryCodes = [429];
        const images = ((c.images ?? []) as Obj[]).map((i) => ({ src: t(i.src), alt: t(i.alt), href: t(i.href) })).filter((i) => i.src !== '');
        const links = ((c.links ?? []) as Obj[]).map((l) => ({ href: t(l.href), text: t(l.text) })).filter((l) => l.href !== '');
        body = goJson({
          routing_key: t(secretOf(c.routing_key, c.routing_key_file)) || undefined,
          dedup_key: key,
          event_action: resolved ? 'resolve' : 'trigger',
          payload: {
            summary: truncate(t(c.description), 1024),
            source: t(c.source),
            severity: t(c.severity),
            class: t(c.class) || undefined,
            component: t(c.component) || undefined,
            group: t(c.group) || undefined,
            custom_details: Object.keys(details).length > 0 ? new RawJson(goJsonLabelSetSorted(details)) : undefined,
          },
          client: t(c.client) || undefined,
          client_url: t(c.client_url) || undefined,
          images: images.length > 0 ? images : undefined,
          links: links.length > 0 ? links : undefined,
        });
      }
      if (t.error) return failed(t.error, false);
      try {
        return checkAnswer(await http.postJson(url, body + '\n', timeLeft(n)), retryCodes);
      } catch (e) {
        return sendError(e);
      }
    },
  };
}
