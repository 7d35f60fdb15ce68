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
  if (keys.length > 16) return keys.sort();
  // Label sets are small: an insertion sort beats Array.prototype.sort's generic comparisons.
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i]!;
    let j = i - 1;
    for (; j >= 0 && keys[j]! > k; j--) keys[j + 1] = keys[j]!;
    keys[j + 1] = k;
  }
  return keys;
}

/**
 * FNV-1a 64 over sorted names: name bytes, 0xFF, value bytes, 0xFF (prometheus/common
 * labelSetToFingerprint), printed as 16 lowercase hex digits. No BigInt: the 64-bit state is two
 * int32 halves (in locals while a string is hashed); the prime 0x100000001b3 is `0x1b3 + 2^40`,
 * so `h * prime` is `lo * 0x1b3` (computed in 16-bit halves to stay in int32 arithmetic) plus
 * `lo << 8` added to the high half.
 * ASCII is hashed straight from the string; from the first non-ASCII character on, the UTF-8
 * bytes (lone surrogates become U+FFFD, as Go's decoder does).
 *
 * Label sets usually come with their names in order (Prometheus sends them sorted): those are
 * hashed in one walk over the object, without a key list or a sort; names out of order or not
 * ASCII take the sorting path.
 */
export function fingerprint(ls: LabelSet): string {
  FNV[0] = 0x84222325 | 0;
  FNV[1] = 0xcbf29ce4 | 0;
  let prev: string | undefined;
  for (const name in ls) {
    if ((prev !== undefined && !(prev < name)) || !fnvString(name, true)) return fingerprintSorted(ls);
    prev = name;
    fnvString(ls[name]!, false);
  }
  return hex64(FNV[1]!, FNV[0]!);
}

/** The same hash over the names in Go order (a key list, sorted). */
function fingerprintSorted(ls: LabelSet): string {
  FNV[0] = 0x84222325 | 0;
  FNV[1] = 0xcbf29ce4 | 0;
  for (const name of sortedNames(ls)) {
    fnvString(name, false);
    fnvString(ls[name]!, false);
  }
  return hex64(FNV[1]!, FNV[0]!);
}

/** The hash being computed: low and high 32 bits (a string at a time goes through locals). */
const FNV = new Int32Array(2);

/**
 * Hash the UTF-8 bytes of `s` and then 0xFF into FNV. ASCII is read straight from the string;
 * with `asciiOnly`, a non-ASCII character stops it and it returns false (the state is then spent).
 */
function fnvString(s: string, asciiOnly: boolean): boolean {
  let lo = FNV[0]!;
  let hi = FNV[1]!;
  let i = 0;
  for (; i <= s.length; i++) {
    const b = i < s.length ? s.charCodeAt(i) : 0xff;
    if (b > 0x7f && i < s.length) break;
    const x = lo ^ b;
    const tl = (x & 0xffff) * 0x1b3;
    const th = (x >>> 16) * 0x1b3 + (tl >>> 16);
    lo = (th << 16) | (tl & 0xffff);
    hi = (Math.imul(hi, 0x1b3) + (th >>> 16) + (x << 8)) | 0;
  }
  if (i <= s.length) {
    if (asciiOnly) return false;
    const rest = Buffer.from(s.slice(i), 'utf8');
    for (let j = 0; j <= rest.length; j++) {
      const x = lo ^ (j < rest.length ? rest[j]! : 0xff);
      const tl = (x & 0xffff) * 0x1b3;
      const th = (x >>> 16) * 0x1b3 + (tl >>> 16);
      lo = (th << 16) | (tl & 0xffff);
      hi = (Math.imul(hi, 0x1b3) + (th >>> 16) + (x << 8)) | 0;
    }
  }
  FNV[0] = lo;
  FNV[1] = hi;
  return true;
}

/** 16 lowercase hex digits, one flat string (not a concatenation tree): fingerprints are hashed as Map keys right away. */
function hex64(hi: number, lo: number): string {
  const h = HEX_CODES;
  return String.fromCharCode(
    h[(hi >>> 28) & 15]!, h[(hi >>> 24) & 15]!, h[(hi >>> 20) & 15]!, h[(hi >>> 16) & 15]!,
    h[(hi >>> 12) & 15]!, h[(hi >>> 8) & 15]!, h[(hi >>> 4) & 15]!, h[hi & 15]!,
    h[(lo >>> 28) & 15]!, h[(lo >>> 24) & 15]!, h[(lo >>> 20) & 15]!, h[(lo >>> 16) & 15]!,
    h[(lo >>> 12) & 15]!, h[(lo >>> 8) & 15]!, h[(lo >>> 4) & 15]!, h[lo & 15]!,
  );
}

const HEX_CODES = Array.from('0123456789abcdef', (c) => c.charCodeAt(0));

/** Empty label values mean "no label" (model.LabelSet): the same object when there are none. */
export function withoutEmptyValues(ls: LabelSet): LabelSet {
  for (const k in ls) {
    if (ls[k] !== '') continue;
    const out: LabelSet = {};
    for (const [n, v] of Object.entries(ls)) if (v !== '') out[n] = v;
    return out;
  }
  return ls;
}

/** Equal label sets (same names and values). */
export function labelSetsEqual(a: LabelSet, b: LabelSet): boolean {
  let n = 0;
  for (const k in a) {
    if (b[k] !== a[k]) return false;
    n++;
  }
  for (const _ in b) n--;
  return n === 0;
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

/** types.AlertSlice order (groups, notifications): job, then instance (missing sorts last), then the label sets. */
export function compareAlertOrder(a: LabelSet, b: LabelSet): number {
  for (const key of ['job', 'instance']) {
    const x = a[key];
    const y = b[key];
    if (x === undefined && y === undefined) continue;
    if (x === undefined) return 1;
    if (y === undefined) return -1;
    if (x !== y) return x < y ? -1 : 1;
  }
  return compareLabelSets(a, b);
}
