/**
 * What a failed attempt means for the request (the notes' classification table, §1.6):
 *
 * | failure                                                         | next target? | scope    |
 * |-----------------------------------------------------------------|--------------|----------|
 * | client went away (aborted, 499)                                 | stop         | -        |
 * | rate-limit / quota / overloaded text, any status                | yes          | account  |
 * | 401, 402, 403                                                   | yes          | account  |
 * | 404, 406, 408, 429, 5xx                                         | yes          | target   |
 * | 400 caused by provider differences: context overflow, unknown  | yes          | target   |
 * |   or unsupported parameter/model, model access                  |              |          |
 * | any other 400 (the client's request is wrong)                   | NO: returned | -        |
 * | any other status                                                | yes          | target   |
 * | connection error, timeout, empty/truncated/garbage stream       | yes          | target   |
 * | provider kind cannot serve the call (unsupported)               | yes          | target   |
 * | a 4xx the gateway raised preparing the call (refused media URL) | NO: returned | -        |
 *
 * "account" failures try the provider's next account before the next target.
 */
import { HttpError } from '../../http/errors.js';
import { domainHttpError } from '../routes/errors.js';
import { isUpstreamError, type UpstreamError } from '../providers/index.js';

export interface Classification {
  /** Move on to another account/target. */
  fallback: boolean;
  /** Stop everything (the client is gone). */
  stop: boolean;
  /** Whether the next account of the same provider may help. */
  scope: 'account' | 'target';
  status: number;
  message: string;
  retryAfterMs?: number;
  /** A rate-limit signal (429 or rate-limit text): the account cools down. */
  rateLimited: boolean;
  /** The failure says something about the provider's health (408, 5xx, connection, timeout). */
  providerFault: boolean;
}

const RATE_LIMIT_TEXT = /rate.?limit|too many requests|quota|capacity|overloaded|high demand|credits? (exhausted|depleted)|insufficient_quota/i;
const PROVIDER_DIFFERENCE_400 = new RegExp(
  [
    'context.{0,20}(length|window|limit|overflow)',
    'maximum context',
    'too many tokens',
    'prompt is too long',
    'max_tokens',
    'reduce the length',
    'model.{0,40}(not found|does not exist|not exist|not supported|unsupported|unavailable|deprecated|access|permission)',
    'no access to model',
    'invalid model',
    'unknown model',
    'unsupported (parameter|value|field|model)',
    'unknown (parameter|field|argument)',
    'unrecognized (request argument|field|parameter)',
    'extra (inputs|fields) (are )?not permitted',
    'not supported (by|for|with|on)',
    'does not support',
    'function .{0,40}degraded',
  ].join('|'),
  'i',
);

export function classify(err: unknown): Classification {
  // A 4xx the gateway itself raised while preparing the call (a media URL the SSRF policy refuses)
  // is the client's mistake: answered as it is, no other target tried. A domain error counts by the
  // status its kind is answered with, as the HttpError it replaced did.
  const own = domainHttpError(err) ?? err;
  if (own instanceof HttpError && own.status >= 400 && own.status < 500) {
    return { fallback: false, stop: false, scope: 'target', status: own.status, message: own.message, rateLimited: false, providerFault: false };
  }
  if (!isUpstreamError(err)) {
    const message = err instanceof Error ? err.message : String(err);
    return { fallback: true, stop: false, scope: 'target', status: 502, message: `gateway error: ${message}`, rateLimited: false, providerFault: false };
  }
  const e = err as UpstreamError;
  const text = `${e.upstreamMessage ?? ''} ${e.upstreamCode ?? ''} ${e.message}`;
  const base = {
    status: e.status,
    message: e.upstreamMessage || e.message,
    ...(e.retryAfterMs !== undefined ? { retryAfterMs: e.retryAfterMs } : {}),
  };
  switch (e.kind) {
    case 'aborted':
      return { ...base, fallback: false, stop: true, scope: 'target', rateLimited: false, providerFault: false };
    case 'connection':
    case 'timeout':
      return { ...base, fallback: true, stop: false, scope: 'target', rateLimited: false, providerFault: true };
    case 'empty-stream':
    case 'empty-response':
    case 'truncated':
    case 'garbage':
    case 'unsupported':
      return { ...base, fallback: true, stop: false, scope: 'target', rateLimited: false, providerFault: false };
    case 'http':
      break;
  }
  const s = e.status;
  if (s === 429 || RATE_LIMIT_TEXT.test(text)) {
    return { ...base, fallback: true, stop: false, scope: 'account', rateLimited: true, providerFault: false };
  }
  if (s === 401 || s === 402 || s === 403) {
    return { ...base, fallback: true, stop: false, scope: 'account', rateLimited: false, providerFault: false };
  }
  if (s === 400) {
    const fallback = PROVIDER_DIFFERENCE_400.test(text);
    return { ...base, fallback, stop: false, scope: 'target', rateLimited: false, providerFault: false };
  }
  const providerFault = s === 408 || s >= 500;
  return { ...base, fallback: true, stop: false, scope: 'target', rateLimited: false, providerFault };
}
