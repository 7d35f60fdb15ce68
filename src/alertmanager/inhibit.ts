/**
 * Inhibition (inhibit/inhibit.go, 0.25): a target alert is inhibited by a rule when a
 * non-resolved source alert matches the rule's source matchers and has the same values for the
 * `equal` labels (missing counts as ""); if the target itself matches the source side, the
 * source must not match the target side. Sources are bucketed by their `equal` values, so a
 * lookup costs the bucket, not every alert (Alertmanager scans all sources per target).
 */
import type { Alert } from './alerts.js';
import type { InhibitRuleRuntime } from './config/runtime.js';
import type { LabelSet } from './labels.js';
import { matchesAll } from './matchers.js';

interface RuleIndex {
  rule: InhibitRuleRuntime;
  buckets: Map<string, Alert[]>;
}

function equalKey(equal: string[], labels: LabelSet): string {
  if (equal.length === 1) return labels[equal[0]!] ?? '';
  let k = '';
  for (const n of equal) k += (labels[n] ?? '') + '\xff';
  return k;
}

export class Inhibitor {
  private indexes: RuleIndex[] = [];

  constructor(readonly rules: InhibitRuleRuntime[]) {}

  /** Rebuild the source buckets from the current alerts (sorted by fingerprint). */
  rebuild(alerts: readonly Alert[]): void {
    this.indexes = this.rules.map((rule) => {
      const buckets = new Map<string, Alert[]>();
      for (const a of alerts) {
        if (!matchesAll(rule.source, a.labels)) continue;
        const k = equalKey(rule.equal, a.labels);
        const b = buckets.get(k);
        if (b) b.push(a);
        else buckets.set(k, [a]);
      }
      return { rule, buckets };
    });
  }

  /** The fingerprint of the first alert inhibiting `labels`, if any. */
  inhibitedBy(labels: LabelSet, now: number): string | undefined {
    for (const { rule, buckets } of this.indexes) {
      if (!matchesAll(rule.target, labels)) continue;
      const candidates = buckets.get(equalKey(rule.equal, labels));
      if (!candidates) continue;
      const twoSided = matchesAll(rule.source, labels);
      for (const s of candidates) {
        if (s.endsAt <= now) continue;
        if (twoSided && matchesAll(rule.target, s.labels)) continue;
        return s.fingerprint;
      }
    }
    return undefined;
  }
}
