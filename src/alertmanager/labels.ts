/** Label sets, label-name validation and Alertmanager's label-set fingerprint. */

export type LabelSet = Record<string, string>;

/** Prometheus label names (model.LabelNameRE): no colons, unlike the filter parser's names. */
export const LABEL_NAME_RE = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export function isValidLabelName(name: string): boolean {
  return LABEL_NAME_RE.test(name);
}

/** Go string order (byte-wise on UTF-8); for ASCII this is plain code-unit order. */
export function compareGoStrings(a: string, b: string): number {
  if (a === b) return 0;
  // Code-unit order equals UTF-8 byte order except around surrogates; use Buffer for non-ASCII.
  if (isAscii(a) && isAscii(b)) return a < b ? -1 : 1;
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

export function sortedNames(ls: LabelSet): string[] {
  const keys = Object.keys(ls);
  for (const k of keys) if (!isAscii(k)) return keys.sort(compareGoStrings);
  return keys.sort();
}

/**
 * FNV-1a 64 over sorted names: name bytes, 0xFF, value bytes, 0xFF (prometheus/common
 * labelSetToFingerprint), printed as 16 lowercase hex digits. The 64-bit state is kept in four
 * 16-bit limbs so no BigInt is needed; the prime 0x100000001b3 is `0x1b3 + 2^40`.
 */
export function fingerprint(ls: LabelSet): string {
  const h = [0x2325, 0x8422, 0x9ce4, 0xcbf2]; // 0xcbf29ce484222325, low limb first
  const names = sortedNames(ls);
  for (const name of names) {
    hashString(h, name);
    hashByte(h, 0xff);
    hashString(h, ls[name]!);
    hashByte(h, 0xff);
  }
  return hex4(h[3]!) + hex4(h[2]!) + hex4(h[1]!) + hex4(h[0]!);
}

const HEX4 = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

function hashByte(h: number[], b: number): void {
  const h0 = h[0]! ^ b;
  const h1 = h[1]!;
  const h2 = h[2]!;
  const h3 = h[3]!;
  const t0 = h0 * 0x1b3;
  const t1 = h1 * 0x1b3 + (t0 >>> 16);
  const t2 = h2 * 0x1b3 + (t1 >>> 16) + (h0 << 8);
  const t3 = h3 * 0x1b3 + (t2 >>> 16) + (h1 << 8);
  h[0] = t0 & 0xffff;
  h[1] = t1 & 0xffff;
  h[2] = t2 & 0xffff;
  h[3] = t3 & 0xffff;
}

function hashString(h: number[], s: string): void {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 0x7f) {
      // Non-ASCII: hash the UTF-8 bytes (lone surrogates become U+FFFD, as Go's decoder does).
      for (const b of Buffer.from(s.slice(i), 'utf8')) hashByte(h, b);
      return;
    }
    hashByte(h, c);
  }
}

function hex4(n: number): string {
  return HEX4[n >> 8]! + HEX4[n & 0xff]!;
}

/** Equal label sets (same names and values). */
export function labelSetsEqual(a: LabelSet, b: LabelSet): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (b[k] !== a[k]) return false;
  return true;
}

/**
 * model.LabelSet.Before: fewer labels first, then walk the sorted union of names: a set missing
 * a name sorts first; else the first differing value decides.
 */
export function compareLabelSets(a: LabelSet, b: LabelSet): number {
  const ka = Object.keys(a).length;
  const kb = Object.keys(b).length;
  if (ka !== kb) return ka < kb ? -1 : 1;
  const names = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort(compareGoStrings);
  for (const n of names) {
    const va = a[n];
    const vb = b[n];
    if (va === undefined) return -1;
    if (vb === undefined) return 1;
    if (va !== vb) return compareGoStrings(va, vb);
  }
  return 0;
}
