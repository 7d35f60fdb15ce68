/**
 * A small re-implementation of yaml.v2's strict decoding into Go structs, driven by type specs:
 * type errors (`line N: cannot unmarshal !!str \`x\` into bool`, `field foo not found in type
 * config.plain`) are collected and reported together; errors from a type's own validation are
 * fatal and reported alone, exactly as Alertmanager prints them. Specs also carry the marshal
 * side (go-yaml field order, omitempty, secrets) used to rebuild `config.original`.
 */
import { Alias, isAlias, isMap, isScalar, isSeq, LineCounter, type Document, type Node as YamlNode } from 'yaml';
import { resolvePlain, type Tag, type YNode, yraw, ystr } from './goyaml.js';

export class ConfigError extends Error {}

export interface DecodeCtx {
  doc: Document;
  lines: LineCounter;
  typeErrors: string[];
}

export type In = YamlNode | null | undefined;

/** A Go type: how to decode it from YAML, whether it is "zero" for omitempty, how to marshal it. */
export interface Spec<T = unknown> {
  go: string;
  /** `n` is never an alias or a null node: those are handled by `decodeValue`. */
  decode(n: YamlNode, ctx: DecodeCtx, current: T | undefined): T;
  /** Zero value (what a missing or null node leaves). */
  zero(): T;
  isZero(v: T): boolean;
  /** undefined marshals as `null`. */
  emit(v: T): YNode | undefined;
}

export function lineOf(ctx: DecodeCtx, n: YamlNode): number {
  const off = n.range?.[0] ?? 0;
  return ctx.lines.linePos(off).line;
}

export function deref(n: In, ctx: DecodeCtx): In {
  let cur = n;
  for (let i = 0; i < 100 && cur && isAlias(cur); i++) cur = (cur as Alias).resolve(ctx.doc) as YamlNode | undefined;
  return cur;
}

export interface ScalarInfo {
  tag: Tag;
  text: string;
  value: unknown;
}

export function scalarInfo(n: YamlNode): ScalarInfo | null {
  if (!isScalar(n)) return null;
  const text = typeof n.source === 'string' ? n.source : String(n.value ?? '');
  if (n.tag) {
    const short = n.tag.replace('tag:yaml.org,2002:', '!!') as Tag;
    if (short === '!!str') return { tag: '!!str', text, value: text };
    const r = resolvePlain(text);
    return { tag: short, text, value: r.value };
  }
  if (n.type === 'PLAIN') {
    const r = resolvePlain(text);
    return { tag: r.tag, text, value: r.value };
  }
  return { tag: '!!str', text, value: text };
}

/** True for a null node (`~`, `null`, empty), which leaves the zero value. */
export function isNullNode(n: In): boolean {
  if (!n) return true;
  const s = scalarInfo(n);
  return s !== null && s.tag === '!!null';
}

export function typeError(ctx: DecodeCtx, n: YamlNode, go: string): void {
  let tag: string;
  let value = '';
  if (isMap(n)) tag = '!!map';
  else if (isSeq(n)) tag = '!!seq';
  else {
    const s = scalarInfo(n)!;
    tag = s.tag;
    value = Buffer.byteLength(s.text) > 10 ? ' `' + Buffer.from(s.text).subarray(0, 7).toString() + '...`' : ' `' + s.text + '`';
  }
  ctx.typeErrors.push(`line ${lineOf(ctx, n)}: cannot unmarshal ${tag}${value} into ${go}`);
}

/** Decode a (possibly missing, null or aliased) node with a spec. */
export function decodeValue<T>(spec: Spec<T>, n: In, ctx: DecodeCtx, current?: T): T {
  const d = deref(n, ctx);
  if (!d || isNullNode(d)) return spec.zero();
  return spec.decode(d, ctx, current);
}

// ---- scalars ---------------------------------------------------------------------------------

export const str: Spec<string> = {
  go: 'string',
  decode(n, ctx) {
    const s = scalarInfo(n);
    if (!s) {
      typeError(ctx, n, 'string');
      return '';
    }
    return s.text;
  },
  zero: () => '',
  isZero: (v) => !v,
  emit: (v) => ystr(v ?? ''),
};

export const bool: Spec<boolean> = {
  go: 'bool',
  decode(n, ctx) {
    const s = scalarInfo(n);
    if (!s || s.tag !== '!!bool') {
      typeError(ctx, n, 'bool');
      return false;
    }
    return s.value as boolean;
  },
  zero: () => false,
  isZero: (v) => !v,
  emit: (v) => yraw(!!v),
};

export function int(go: 'int' | 'int64' | 'uint64'): Spec<number> {
  return {
    go,
    decode(n, ctx) {
      const s = scalarInfo(n);
      if (s && s.tag === '!!int') {
        const v = s.value as bigint;
        if (go === 'uint64' ? v >= 0n : v >= -(2n ** 63n) && v < 2n ** 63n) return Number(v);
      }
      if (s && s.tag === '!!float' && Number.isInteger(s.value) && !(go === 'uint64' && (s.value as number) < 0)) {
        return s.value as number;
      }
      typeError(ctx, n, go);
      return 0;
    },
    zero: () => 0,
    isZero: (v) => !v,
    emit: (v) => yraw(v ?? 0),
  };
}

/**
 * A Go type with its own UnmarshalYAML that reads a string and parses it (durations, URLs,
 * regexps, ...). A non-string node is a type error; a parse error is fatal.
 */
export function parsed<T>(
  go: string,
  parse: (s: string) => T,
  emit: (v: T) => YNode | undefined,
  opts: { zero?: () => T; isZero?: (v: T) => boolean } = {},
): Spec<T> {
  const zero = opts.zero ?? (() => undefined as T);
  return {
    go,
    decode(n, ctx) {
      const s = scalarInfo(n);
      if (!s) {
        typeError(ctx, n, 'string');
        return zero();
      }
      try {
        return parse(s.text);
      } catch (e) {
        if (e instanceof ConfigError) throw e;
        throw new ConfigError((e as Error).message);
      }
    },
    zero,
    isZero: opts.isZero ?? ((v) => v === undefined || v === null),
    emit: (v) => (v === undefined || v === null ? undefined : emit(v)),
  };
}

// ---- collections -----------------------------------------------------------------------------

export function list<T>(of: Spec<T>, opts: { go?: string; flow?: boolean } = {}): Spec<T[]> {
  const go = opts.go ?? `[]${of.go}`;
  return {
    go,
    decode(n, ctx) {
      if (!isSeq(n)) {
        typeError(ctx, n, go);
        return [];
      }
      return n.items.map((item) => decodeValue(of, item as In, ctx));
    },
    zero: () => [],
    isZero: (v) => !v || v.length === 0,
    emit: (v) => ({ t: 'seq', items: (v ?? []).map((x) => of.emit(x) ?? yraw(null)), flow: opts.flow }),
  };
}

/** go-yaml v2 keyList order: runs of digits compare numerically, letters before other runes. */
export function goYamlKeyLess(a: string, b: string): boolean {
  const ar = Array.from(a);
  const br = Array.from(b);
  const isLetter = (c: string) => /\p{L}/u.test(c);
  const isDigit = (c: string) => c >= '0' && c <= '9';
  for (let i = 0; i < ar.length && i < br.length; i++) {
    if (ar[i] === br[i]) continue;
    const al = isLetter(ar[i]!);
    const bl = isLetter(br[i]!);
    if (al && bl) return ar[i]! < br[i]!;
    if (al || bl) return bl;
    let an = 0, bn = 0;
    let ai = i, bi = i;
    if (isDigit(ar[i]!) && isDigit(br[i]!)) {
      while (ai < ar.length && isDigit(ar[ai]!)) an = an * 10 + Number(ar[ai++]);
      while (bi < br.length && isDigit(br[bi]!)) bn = bn * 10 + Number(br[bi++]);
      if (an !== bn) return an < bn;
      // Same number with different leading zeros: fall through to the rune order.
    }
    return ar[i]! < br[i]!;
  }
  return ar.length < br.length;
}

export function sortGoYamlKeys(keys: string[]): string[] {
  return [...keys].sort((x, y) => (goYamlKeyLess(x, y) ? -1 : goYamlKeyLess(y, x) ? 1 : 0));
}

/** map[string]V: duplicate keys are type errors in strict mode; marshalled with sorted keys. */
export function dict<T>(of: Spec<T>, go = `map[string]${of.go}`): Spec<Record<string, T>> {
  return {
    go,
    decode(n, ctx) {
      const out: Record<string, T> = {};
      if (!isMap(n)) {
        typeError(ctx, n, go);
        return out;
      }
      for (const pair of mergedPairs(n, ctx)) {
        const k = deref(pair.key as In, ctx);
        const ks = k ? scalarInfo(k) : null;
        if (!k || !ks) {
          if (k) typeError(ctx, k, 'string');
          continue;
        }
        if (Object.prototype.hasOwnProperty.call(out, ks.text)) {
          ctx.typeErrors.push(`line ${lineOf(ctx, k)}: key ${JSON.stringify(ks.text)} already set in map`);
          continue;
        }
        out[ks.text] = decodeValue(of, pair.value as In, ctx);
      }
      return out;
    },
    zero: () => ({}) as Record<string, T>,
    isZero: (v) => !v || Object.keys(v).length === 0,
    emit: (v) => ({
      t: 'map',
      entries: sortGoYamlKeys(Object.keys(v ?? {})).map((k) => [k, of.emit(v[k]!) ?? yraw(null)] as [string, YNode]),
    }),
  };
}

interface Pair {
  key: unknown;
  value: unknown;
}

/** Mapping pairs with `<<: *anchor` merge keys expanded (explicit keys win). */
export function mergedPairs(n: YamlNode, ctx: DecodeCtx): Pair[] {
  if (!isMap(n)) return [];
  const own: Pair[] = [];
  const merged: Pair[] = [];
  for (const p of n.items) {
    const k = deref(p.key as In, ctx);
    if (k && isScalar(k) && k.source === '<<' && (k as { type?: string }).type === 'PLAIN') {
      const v = deref(p.value as In, ctx);
      const sources = v && isSeq(v) ? v.items.map((i) => deref(i as In, ctx)) : [v];
      for (const src of sources) if (src && isMap(src)) merged.push(...mergedPairs(src, ctx));
      continue;
    }
    own.push(p as Pair);
  }
  if (merged.length === 0) return own;
  const ownKeys = new Set(own.map((p) => scalarInfo(deref(p.key as In, ctx) as YamlNode)?.text));
  const seen = new Set<string | undefined>();
  const extra = merged.filter((p) => {
    const key = scalarInfo(deref(p.key as In, ctx) as YamlNode)?.text;
    if (ownKeys.has(key) || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return [...extra, ...own];
}

// ---- structs ---------------------------------------------------------------------------------

export interface Field {
  key: string;
  spec: Spec<any>;
  omitempty?: boolean;
  /** Pointer field: nil (undefined) when absent or null. */
  ptr?: boolean;
  /** Marshal with yaml `,flow`. */
  flow?: boolean;
}

export type Obj = Record<string, any>;

export interface StructOpts {
  /** Values set before decoding (the type's UnmarshalYAML does `*c = DefaultX`). */
  defaults?: () => Obj;
  /** Checks after a clean decode; throw ConfigError with Alertmanager's message. */
  validate?: (o: Obj, ctx: DecodeCtx) => void;
  /** Custom marshal hook (e.g. timeinterval ranges); default marshals fields in order. */
  emit?: (o: Obj) => YNode | undefined;
  isZero?: (o: Obj) => boolean;
}

export function struct(go: string, fields: Field[], opts: StructOpts = {}): Spec<Obj> & { fields: Field[] } {
  const byKey = new Map(fields.map((f) => [f.key, f]));
  const zeroObj = (): Obj => {
    const o: Obj = {};
    for (const f of fields) o[f.key] = f.ptr ? undefined : f.spec.zero();
    return o;
  };
  const self: Spec<Obj> & { fields: Field[] } = {
    go,
    fields,
    decode(n, ctx) {
      const o = zeroObj();
      if (opts.defaults) Object.assign(o, opts.defaults());
      if (!isMap(n)) {
        typeError(ctx, n, go);
        return o;
      }
      const before = ctx.typeErrors.length;
      const seen = new Set<string>();
      for (const pair of mergedPairs(n, ctx)) {
        const k = deref(pair.key as In, ctx);
        const ks = k ? scalarInfo(k) : null;
        if (!k || !ks) continue;
        const f = byKey.get(ks.text);
        if (!f) {
          ctx.typeErrors.push(`line ${lineOf(ctx, k)}: field ${ks.text} not found in type ${go}`);
          continue;
        }
        if (seen.has(f.key)) {
          ctx.typeErrors.push(`line ${lineOf(ctx, k)}: field ${f.key} already set in type ${go}`);
          continue;
        }
        seen.add(f.key);
        const v = deref(pair.value as In, ctx);
        if (!v || isNullNode(v)) o[f.key] = f.ptr ? undefined : f.spec.zero();
        else o[f.key] = f.spec.decode(v, ctx, o[f.key]);
      }
      if (ctx.typeErrors.length === before && opts.validate) opts.validate(o, ctx);
      return o;
    },
    zero: zeroObj,
    isZero(o) {
      if (!o) return true;
      if (opts.isZero) return opts.isZero(o);
      return fields.every((f) => (f.ptr ? o[f.key] === undefined : f.spec.isZero(o[f.key])));
    },
    emit(o) {
      if (!o) return undefined;
      if (opts.emit) return opts.emit(o);
      return emitFields(fields, o);
    },
  };
  return self;
}

export function emitFields(fields: Field[], o: Obj): YNode {
  const entries: [string, YNode][] = [];
  for (const f of fields) {
    const v = o[f.key];
    const zero = f.ptr ? v === undefined : f.spec.isZero(v);
    if (f.omitempty && zero) continue;
    let node = f.ptr && v === undefined ? undefined : f.spec.emit(v);
    if (node && node.t === 'seq' && f.flow) node = { ...node, flow: true };
    entries.push([f.key, node ?? yraw(null)]);
  }
  return { t: 'map', entries };
}

export const F = (key: string, spec: Spec<any>, more: Omit<Field, 'key' | 'spec'> = {}): Field => ({ key, spec, ...more });
/** `yaml:"key,omitempty"` */
export const O = (key: string, spec: Spec<any>, more: Omit<Field, 'key' | 'spec'> = {}): Field => ({ key, spec, omitempty: true, ...more });
