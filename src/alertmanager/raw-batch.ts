/**
 * Alert batches journaled as they arrived: the POST body as received, plus the outcome of each
 * element (the startsAt, endsAt and timeout it was stored with after merging, or NaN when it was
 * rejected). The third number also carries the times' nanoseconds past the millisecond:
 * timeout + 2·startsAtNs + 2e6·endsAtNs (below 2^41, exact in a float64; a journal written before
 * holds 0 or 1 there, which reads as no nanoseconds), plus 2^41 when startsAt is in the Local zone
 * (offset 0) and 2^42 when endsAt is (below 2^43; a journal written before reads as no zone). Storing the body saves serialising 100 alerts again on the request path (as much
 * CPU as the SQLite commit itself); replaying decodes it with the same decoder and applies the
 * recorded outcome, which yields each fingerprint's final state, exactly what a JSON journal row
 * holds, so replay order and compaction work the same. Only batches whose every element took
 * the plain decoding path, and whose merges all kept the posted alert as the base, are written
 * this way (see AlertStore.put); the rest are journaled as JSON.
 */
import { decodePostableAlerts } from './api/bodies.js';
import { fingerprint, withoutEmptyValues } from './labels.js';
import type { StoredAlert } from './persist.js';

export interface RawAlertBatch {
  body: Buffer;
  updatedAt: number;
  /** Three numbers per body element: startsAt, endsAt, outcomeFlags(); NaN for a rejected element. */
  outcome: Float64Array;
}

/** The third outcome number of an element: its timeout and its times' nanoseconds past the millisecond. */
export function outcomeFlags(timeout: boolean, startsAtNs: number, endsAtNs: number, startsLocal = false, endsLocal = false): number {
  return (timeout ? 1 : 0) + 2 * startsAtNs + 2_000_000 * endsAtNs + (startsLocal ? LOCAL_START : 0) + (endsLocal ? LOCAL_END : 0);
}

const LOCAL_START = 2 ** 41;
const LOCAL_END = 2 ** 42;

/** The stored states a raw batch produced, in body order (a later duplicate wins on replay). */
export function replayRawBatch(b: RawAlertBatch): StoredAlert[] {
  const input = decodePostableAlerts(b.body).alerts;
  if (input.length * 3 !== b.outcome.length) throw new Error('alert journal: body and outcome disagree');
  const out: StoredAlert[] = [];
  input.forEach((p, i) => {
    const startsAt = b.outcome[3 * i]!;
    if (Number.isNaN(startsAt)) return;
    const labels = withoutEmptyValues(p.labels);
    const all = b.outcome[3 * i + 2]!;
    const flags = all % LOCAL_START;
    const zones = Math.floor(all / LOCAL_START);
    out.push({
      fingerprint: fingerprint(labels),
      labels,
      annotations: p.annotations,
      startsAt,
      endsAt: b.outcome[3 * i + 1]!,
      updatedAt: b.updatedAt,
      generatorURL: p.generatorURL,
      timeout: flags % 2 === 1,
      ...(flags > 1 ? { startsAtNs: Math.floor(flags / 2) % 1_000_000, endsAtNs: Math.floor(flags / 2_000_000) } : {}),
      ...(zones % 2 === 1 ? { startsAtOff: 0 } : {}),
      ...(zones >= 2 ? { endsAtOff: 0 } : {}),
    });
  });
  return out;
}
