/**
 * What every receiver integration shares: the notification it is given, the outcome of one send
 * attempt, and the helpers 0.25's notifiers all use (rune truncation, the group key hash).
 */
import { createHash } from 'node:crypto';
import type { Templates } from '../../gotemplate/index.js';
import type { LabelSet } from '../labels.js';

export interface NotifyAlert {
  labels: LabelSet;
  annotations: LabelSet;
  startsAt: number;
  /** GO_ZERO_MS for an alert that is still firing (dispatch clears its end). */
  endsAt: number;
  /** Nanoseconds past the millisecond of startsAt / endsAt (0-999999). */
  startsAtNs?: number;
  endsAtNs?: number;
  /** The zone offsets the times were posted with (minutes east of UTC; absent: UTC). */
  startsAtOff?: number;
  endsAtOff?: number;
  generatorURL: string;
  fingerprint: string;
  resolved: boolean;
}

/** One notification: a group's alerts (already filtered by send_resolved) for one receiver. */
export interface Notification {
  receiver: string;
  groupKey: string;
  groupLabels: LabelSet;
  alerts: NotifyAlert[];
  externalURL: string;
  templates: Templates;
  /** When the next flush of the group is due: no attempt runs past it (0.25 bounds a notification by group_interval). */
  deadline: number;
}

/** What 0.25's own requests (notify.PostJSON, Get, Opsgenie's, the OAuth2 token request) carry. */
export const USER_AGENT = 'Alertmanager/0.25.0';
/** Go's net/http default User-Agent, sent where 0.25's request is built by a library (Telegram's telebot). */
export const GO_USER_AGENT = 'Go-http-client/1.1';

/** The time one request may take: what is left until the deadline, at least a second. */
export const timeLeft = (n: Notification): number => Math.max(1000, n.deadline - Date.now());

/** The result of one attempt: delivered, or failed with whether another attempt may help. */
export interface Attempt {
  ok: boolean;
  retry: boolean;
  error?: string;
}

export const DELIVERED: Attempt = { ok: true, retry: false };
export const failed = (error: string, retry: boolean): Attempt => ({ ok: false, retry, error });

export interface Integration {
  /** 0.25's integration name (`webhook`, `slack`, `email`, ...): metrics label and nflog key part. */
  readonly kind: string;
  /** Position among the receiver's integrations of this kind. */
  readonly index: number;
  readonly sendResolved: boolean;
  send(n: Notification): Promise<Attempt>;
}

/** notify.Truncate: at most `n` runes, the last one `…` when cut. */
export function truncate(s: string, n: number): string {
  const runes = [...s];
  if (runes.length <= n) return s;
  if (n <= 3) return runes.slice(0, n).join('');
  return runes.slice(0, n - 1).join('') + '…';
}

/** notify.TruncateInBytes: at most `n` UTF-8 bytes (whole runes), `…` last when cut. */
export function truncateBytes(s: string, n: number): string {
  if (Buffer.byteLength(s) <= n) return s;
  const ellipsis = 3;
  let bytes = 0;
  let out = '';
  for (const r of s) {
    const b = Buffer.byteLength(r);
    if (bytes + b > n - ellipsis) break;
    bytes += b;
    out += r;
  }
  return out + '…';
}

/** Key.Hash: the SHA-256 of the group key, in hex (dedup keys, aliases, entity ids). */
export function groupKeyHash(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** The group's state: firing while any alert fires. */
export const groupStatus = (alerts: readonly NotifyAlert[]): 'firing' | 'resolved' => (alerts.some((a) => !a.resolved) ? 'firing' : 'resolved');
