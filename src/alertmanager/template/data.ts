/**
 * Alertmanager 0.25's template data (template/template.go) as the Go template engine sees it:
 * `Data` (Receiver, Status, Alerts, GroupLabels, CommonLabels, CommonAnnotations, ExternalURL), `KV`
 * maps with SortedPairs/Names/Values/Remove, `Pairs` with Names/Values, `Alerts` with
 * Firing/Resolved, times printing as Go's time.Time; and its functions (toUpper, toLower, title,
 * join, match, reReplaceAll, safeHtml, stringSlice).
 */
import { RE2JS } from 're2js';
import { GO_FORMAT, GO_JSON, GO_POINTER, GO_TYPE, MAP_ZERO, SAFE_HTML, formatValue, type TemplateFunc } from '../../gotemplate/index.js';
import { toJSON } from '../../gotemplate/html/escapers.js';
import { goTime } from '../../gotemplate/gotime.js';
import { goReplaceAll } from '../../gotemplate/goregexp.js';
import { goTitle, goToLower, goToUpper } from '../../gotemplate/unicase.js';

type KV = Record<string, string>;

/** A method Go has on the type: callable from templates, not a key or an element. */
function method<T extends object>(target: T, name: string, fn: (...args: never[]) => unknown): T {
  Object.defineProperty(target, name, { value: fn, enumerable: false });
  return target;
}

/** A value's Go type for %T (a symbol: not a field, key or element). */
function typed<T extends object>(v: T, type: string): T {
  Object.defineProperty(v, GO_TYPE, { value: type, enumerable: false });
  return v;
}

export function pairs(list: { Name: string; Value: string }[]): { Name: string; Value: string }[] {
  const out = typed(list.map((p) => ({ Name: p.Name, Value: p.Value, [GO_TYPE]: 'template.Pair', [GO_FORMAT]: () => `{${p.Name} ${p.Value}}` })), 'template.Pairs');
  method(out, 'Names', () => typed(out.map((p) => p.Name), '[]string'));
  method(out, 'Values', () => typed(out.map((p) => p.Value), '[]string'));
  return out;
}

/** template.KV: a map of strings with its methods. */
export function kv(map: KV): KV {
  const out: KV = typed({}, 'template.KV');
  // map[string]string: a missing key reads as "".
  Object.defineProperty(out, MAP_ZERO, { value: '', enumerable: false });
  for (const k of Object.keys(map)) out[k] = map[k]!;
  method(out, 'SortedPairs', () => {
    // 0.25 puts alertname first, the rest sorted by name.
    const names = Object.keys(out).sort((a, b) => (a === 'alertname' ? -1 : b === 'alertname' ? 1 : a < b ? -1 : a > b ? 1 : 0));
    return pairs(names.map((n) => ({ Name: n, Value: out[n]! })));
  });
  method(out, 'Names', () => (out as unknown as { SortedPairs(): { Names(): string[] } }).SortedPairs().Names());
  method(out, 'Values', () => (out as unknown as { SortedPairs(): { Values(): string[] } }).SortedPairs().Values());
  method(out, 'Remove', (keys: string[]) => {
    const drop = new Set(keys);
    const rest: KV = {};
    for (const k of Object.keys(out)) if (!drop.has(k)) rest[k] = out[k]!;
    return kv(rest);
  });
  return out;
}

export interface AlertInput {
  status: 'firing' | 'resolved';
  labels: KV;
  annotations: KV;
  startsAt: number;
  endsAt: number;
  /** Nanoseconds past the millisecond of startsAt / endsAt (0-999999), when known. */
  startsAtNs?: number;
  endsAtNs?: number;
  /** The zone offsets the times were posted with (minutes east of UTC; absent: UTC). */
  startsAtOff?: number;
  endsAtOff?: number;
  generatorURL: string;
  fingerprint: string;
}

export interface DataInput {
  receiver: string;
  status: 'firing' | 'resolved';
  alerts: AlertInput[];
  groupLabels: KV;
  commonLabels: KV;
  commonAnnotations: KV;
  externalURL: string;
}

/** template.Alerts; Firing and Resolved return []template.Alert (no methods of their own in Go, but ours keep them). */
function alertsOf(list: object[], type = 'template.Alerts'): object[] {
  const out = typed([...list], type);
  method(out, 'Firing', () => alertsOf(out.filter((a) => (a as { Status: string }).Status === 'firing'), '[]template.Alert'));
  method(out, 'Resolved', () => alertsOf(out.filter((a) => (a as { Status: string }).Status === 'resolved'), '[]template.Alert'));
  return out;
}

/** encoding/json of a struct with json tags: each field under its tag. */
function jsonStruct(fields: [string, unknown][]): () => string {
  return () => `{${fields.map(([k, v]) => `${JSON.stringify(k)}:${toJSON(v)}`).join(',')}}`;
}

/** regexp.QuoteMeta: 0.25 puts the receiver name into the data quoted so (`team\\.a` for `team.a`). */
export function quoteMeta(s: string): string {
  return s.replace(/[\\.+*?()|[\]{}^$]/g, '\\$&');
}

/**
 * template.Data. `notification` is what receivers render with (a *template.Data, as 0.25's
 * notifiers pass it: `{{ . }}` prints `&{...}`, the receiver name regexp-quoted); `amtool` is what
 * `amtool template render` renders with (the value, as read from its JSON).
 */
export function templateData(d: DataInput, form: 'notification' | 'amtool' = 'notification'): Record<string, unknown> {
  const alerts = alertsOf(
    d.alerts.map((a) => {
      const o = {
        Status: a.status,
        Labels: kv(a.labels),
        Annotations: kv(a.annotations),
        StartsAt: goTime(a.startsAt, a.startsAtNs, a.startsAtOff),
        EndsAt: goTime(a.endsAt, a.endsAtNs, a.endsAtOff),
        GeneratorURL: a.generatorURL,
        Fingerprint: a.fingerprint,
      };
      return {
        ...o,
        [GO_TYPE]: 'template.Alert',
        [GO_FORMAT]: () => `{${Object.values(o).map((v) => formatValue(v, false)).join(' ')}}`,
        [GO_JSON]: jsonStruct([['status', o.Status], ['labels', o.Labels], ['annotations', o.Annotations], ['startsAt', o.StartsAt], ['endsAt', o.EndsAt], ['generatorURL', o.GeneratorURL], ['fingerprint', o.Fingerprint]]),
      };
    }),
  );
  const data = {
    Receiver: form === 'notification' ? quoteMeta(d.receiver) : d.receiver,
    Status: d.status,
    Alerts: alerts,
    GroupLabels: kv(d.groupLabels),
    CommonLabels: kv(d.commonLabels),
    CommonAnnotations: kv(d.commonAnnotations),
    ExternalURL: d.externalURL,
  };
  const pointer = form === 'notification' ? '&' : '';
  // A struct: `.Nope` is an error, not a missing key.
  const json = jsonStruct([['receiver', data.Receiver], ['status', data.Status], ['alerts', data.Alerts], ['groupLabels', data.GroupLabels], ['commonLabels', data.CommonLabels], ['commonAnnotations', data.CommonAnnotations], ['externalURL', data.ExternalURL]]);
  const out: Record<string | symbol, unknown> = { ...data, [GO_TYPE]: `${pointer ? '*' : ''}template.Data`, [GO_FORMAT]: () => `${pointer}{${Object.values(data).map((v) => formatValue(v, false)).join(' ')}}`, [GO_JSON]: json };
  if (pointer) out[GO_POINTER] = true;
  return out;
}

/** Alertmanager's template functions (template.DefaultFuncs). */
export const ALERTMANAGER_FUNCS: Record<string, TemplateFunc> = {
  // Go's case mappings (simple per code point; title as golang.org/x/text/cases does it).
  toUpper: (s) => goToUpper(String(s)),
  toLower: (s) => goToLower(String(s)),
  title: (s) => goTitle(String(s)),
  join: (sep, list) => (list as string[]).join(String(sep)),
  match: (re, text) => RE2JS.compile(String(re)).matcher(String(text)).find(),
  reReplaceAll: (pattern, repl, text) => goReplaceAll(String(pattern), String(text), String(repl)),
  // template.HTML: printed unescaped where texts are escaped (HTML e-mail, Telegram's HTML mode).
  safeHtml: (s) => ({ [GO_FORMAT]: () => String(s), [SAFE_HTML]: true, toString: () => String(s) }),
  stringSlice: (...s) => typed(s.map(String), '[]string'),
};
