/**
 * Alert batches journaled as they arrived: the POST body as received, plus the outcome of each
 * element (the startsAt, endsAt and timeout it was stored with after merging, or NaN when it was
 * rejected). Storing the body saves serialising 100 alerts again on the request path (as much
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
  /** Three numbers per body element: startsAt, endsAt, timeout (0/1); NaN for a rejected element. */
  outcome: Float64Array;
}

/** The stored states a raw batch produced, in body order (a later duplicate wins on replay). */
export function replayRawBatch(b: RawAlertBatch): StoredAlert[] {
  const input = decodePostableAlerts(b.body).alerts;
  if (input.length * 3 !== b.outcome.length) throw new Error('alert journal: body and outcome disagree');
  const out: StoredAlert[] = [];
  input.forEach((p, i) => {
    const startsAt = b.outcome[3 * i]!;
    if (Number.isNaN(startsAt)) return;
    const labels = withoutEmptyValues(p.labels);
    out.push({
      fingerprint: fingerprint(labels),
      labels,
      annotations: p.annotations,
      startsAt,
      endsAt: b.outcome[3 * i + 1]!,
      updatedAt: b.updatedAt,
      generatorURL: p.generatorURL,
      timeout: b.outcome[3 * i + 2] === 1,
    });
  });
  return out;
}
