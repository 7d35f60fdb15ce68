/**
 * The webhook receiver of Alertmanager 0.25: a POST of the notification as JSON (payload version 4),
 * written as Go's encoding/json writes that struct (field order, sorted label keys, HTML-safe
 * escapes, RFC3339Nano times, a trailing newline), `max_alerts` truncating into `truncatedAlerts`.
 */
import { goJsonString } from '../api/json.js';
import { GO_ZERO_MS, offsetText } from '../timefmt.js';
import type { LabelSet } from '../labels.js';
import { checkAnswer, HttpClient, sendError, urlOf } from './http.js';
import { commonOf } from './template-text.js';
import { timeLeft, type Attempt, type Integration, type Notification, type NotifyAlert } from './types.js';

/** What the payload is made of (the dispatcher's notification, without templates). */
export type NotificationData = Omit<Notification, 'templates' | 'deadline'>;

/**
 * time.Time.MarshalJSON: RFC3339 with nanoseconds (`ns` past the millisecond), the fraction's
 * trailing zeros dropped; Go's zero time as is.
 */
export function goTimeJson(ms: number, ns = 0, off?: number): string {
  if (ms === GO_ZERO_MS) return '"0001-01-01T00:00:00Z"';
  // In the zone the time was posted with (Go keeps it): local digits, then the offset.
  const zone = offsetText(off);
  const iso = new Date(off ? ms + off * 60_000 : ms).toISOString();
  if (!ns) return '"' + iso.replace(/\.?0+Z$/, '') + zone + '"';
  return '"' + iso.slice(0, -1) + (String(ns).padStart(6, '0').replace(/0+$/, '')) + zone + '"';
}

function kvJson(ls: LabelSet): string {
  return '{' + Object.keys(ls).sort().map((k) => `${goJsonString(k)}:${goJsonString(ls[k]!)}`).join(',') + '}';
}

/** webhook.Message for `data`, truncated to `maxAlerts` (0: all). */
export function webhookPayload(data: NotificationData, maxAlerts: number): string {
  // 0.25 truncates first: status and the common labels and annotations describe the alerts sent.
  const sent = maxAlerts > 0 && data.alerts.length > maxAlerts ? data.alerts.slice(0, maxAlerts) : data.alerts;
  const status = sent.some((a) => !a.resolved) ? 'firing' : 'resolved';
  const alerts = sent.map(
    (a) =>
      `{"status":${a.resolved ? '"resolved"' : '"firing"'},"labels":${kvJson(a.labels)},"annotations":${kvJson(a.annotations)},` +
      `"startsAt":${goTimeJson(a.startsAt, a.startsAtNs, a.startsAtOff)},"endsAt":${goTimeJson(a.endsAt, a.endsAtNs, a.endsAtOff)},"generatorURL":${goJsonString(a.generatorURL)},"fingerprint":${goJsonString(a.fingerprint)}}`,
  );
  return (
    `{"receiver":${goJsonString(data.receiver)},"status":"${status}","alerts":[${alerts.join(',')}],` +
    `"groupLabels":${kvJson(data.groupLabels)},"commonLabels":${kvJson(commonOf(sent, (a) => a.labels))},` +
    `"commonAnnotations":${kvJson(commonOf(sent, (a) => a.annotations))},"externalURL":${goJsonString(data.externalURL)},` +
    `"version":"4","groupKey":${goJsonString(data.groupKey)},"truncatedAlerts":${data.alerts.length - sent.length}}\n`
  );
}

const NO_HEADERS: Record<string, string> = {};

/** webhook_configs entry: POST the payload to `url`; 0.25 retries 5xx and 429. */
export function webhookIntegration(c: Record<string, any>, index: number, http: HttpClient): Integration {
  const url = urlOf(c.url);
  return {
    kind: 'webhook',
    index,
    sendResolved: c.send_resolved !== false,
    async send(n: Notification): Promise<Attempt> {
      try {
        // 0.25's webhook error names the status only: the answer's text is not read.
        return checkAnswer(await http.postJson(url, webhookPayload(n, Number(c.max_alerts ?? 0)), timeLeft(n), NO_HEADERS, true), [429], false);
      } catch (e) {
        return sendError(e);
      }
    },
  };
}
