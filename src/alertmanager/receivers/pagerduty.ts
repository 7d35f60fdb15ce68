/**
 * pagerduty_configs: Events API v2 (`routing_key`) or the v1 generic API (`service_key`), with the
 * group key's SHA-256 as dedup/incident key, `trigger` while any alert fires and `resolve` after;
 * details, images and links from the configured templates; summaries cut at 1,024 runes. v2's
 * `severity` is `error` when the configuration leaves it empty; v1 sends its details with resolve
 * events too. An event over 512 kB has its details replaced by a note saying so. v2 retries 429 and
 * 5xx; v1 retries 403 (its rate limit) and 5xx.
 */
import { goJson, goJsonLabelSetSorted, RawJson } from '../api/json.js';
import { checkAnswer, HttpClient, sendError, secretOf, urlOf } from './http.js';
import { expander } from './template-text.js';
import { failed, groupKeyHash, groupStatus, truncate, type Attempt, type Integration, type Notification, timeLeft } from './types.js';

type Obj = Record<string, any>;

const V1_URL = 'https://events.pagerduty.com/generic/2010-04-15/create_event.json';
/** The largest event PagerDuty takes; over it the details go (0.25's words for why). */
const MAX_EVENT_BYTES = 512000;
const TOO_LARGE = { error: 'Custom details have been removed because the original event exceeds the maximum size of 512KB' };

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
      // The event as a function of its details, so an oversized one can be encoded again without them.
      let event: (details: Record<string, string>) => string;
      let apiKey: string;
      let url: string;
      let retryCodes: number[];
      const detailsJson = (d: Record<string, string>) => (Object.keys(d).length === 0 ? undefined : new RawJson(goJsonLabelSetSorted(d)));
      if (c.service_key || c.service_key_file) {
        url = V1_URL;
        retryCodes = [403];
        apiKey = t(secretOf(c.service_key, c.service_key_file));
        const head = {
          service_key: apiKey || undefined,
          incident_key: key,
          event_type: resolved ? 'resolve' : 'trigger',
          description: truncate(t(c.description), 1024) || undefined,
          event_action: '',
          payload: null,
          client: resolved ? undefined : t(c.client) || undefined,
          client_url: resolved ? undefined : t(c.client_url) || undefined,
        };
        event = (d) => goJson({ ...head, details: detailsJson(d) });
      } else {
        url = urlOf(c.url);
        retryCodes = [429];
        const images = ((c.images ?? []) as Obj[]).map((i) => ({ src: t(i.src), alt: t(i.alt), href: t(i.href) })).filter((i) => i.src !== '');
        const links = ((c.links ?? []) as Obj[]).map((l) => ({ href: t(l.href), text: t(l.text) })).filter((l) => l.href !== '');
        apiKey = t(secretOf(c.routing_key, c.routing_key_file));
        const head = {
          routing_key: apiKey || undefined,
          dedup_key: key,
          event_action: resolved ? 'resolve' : 'trigger',
        };
        const payload = {
          summary: truncate(t(c.description), 1024),
          source: t(c.source),
          severity: t(c.severity || 'error'),
          class: t(c.class) || undefined,
          component: t(c.component) || undefined,
          group: t(c.group) || undefined,
        };
        const tail = {
          client: t(c.client) || undefined,
          client_url: t(c.client_url) || undefined,
          images: images.length > 0 ? images : undefined,
          links: links.length > 0 ? links : undefined,
        };
        event = (d) => goJson({ ...head, payload: { ...payload, custom_details: detailsJson(d) }, ...tail });
      }
      let body = event(details) + '\n';
      if (Buffer.byteLength(body) > MAX_EVENT_BYTES) body = event(TOO_LARGE) + '\n';
      if (t.error) return failed(t.error, false);
      // 0.25 checks the key after templating: a template that renders nothing is a configuration error.
      if (!apiKey) return failed(`${url === V1_URL ? 'service' : 'routing'} key cannot be empty`, false);
      try {
        return checkAnswer(await http.postJson(url, body, timeLeft(n)), retryCodes);
      } catch (e) {
        return sendError(e);
      }
    },
  };
}
