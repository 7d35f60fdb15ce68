/**
 * Alertmanager 0.25's template data (template/template.go) as the Go template engine sees it:
 * `Data` (Receiver, Status, Alerts, GroupLabels, CommonLabels, CommonAnnotations, ExternalURL), `KV`
 * maps with SortedPairs/Names/Values/Remove, `Pairs` with Names/Values, `Alerts` with
 * Firing/Resolved, times printing as Go's time.Time; and its functions (toUpper, toLower, title,
 * join, match, reReplaceAll, safeHtml, stringSlice).
 */
import { RE2JS } from 're2js';
import { GO_FORMAT, GO_TYPE, MAP_ZERO, SAFE_HTML, formatValue, type TemplateFunc } from '../../gotemplate/index.js';

type KV = Record<string, string>;

/** A method Go has on the type: callable from templates, not a key or an element. */
function method<T extends object>(target: T, name: string, fn: (...args: never[]) => unknown): T {
  Object.defineProperty(target, name, { value: fn, enumerable: false });
  return target;
}

export function pairs(list: { Name: string; Value: string }[]): { Name: string; Value: string }[] {
  const out = list.map((p) => ({ Name: p.Name, Value: p.Value, [GO_FORMAT]: () => `{${p.Name} ${p.Value}}` }));
  method(out, 'Names', () => out.map((p) => p.Name));
  method(out, 'Values', () => out.map((p) => p.Value));
  return out;
}

/** template.KV: a map of strings with its methods. */
export function kv(map: KV): KV {
  const out: KV = {};
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

/** time.Time as templates use it: printed as Go prints it (UTC here), with Format and Unix. */
export function goTime(ms: number): object {
  const d = new Date(ms);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  const frac = ms % 1000 === 0 ? '' : '.' + pad(((ms % 1000) + 1000) % 1000, 3).replace(/0+$/, '');
  const text = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}${frac} +0000 UTC`;
  const t = { [GO_FORMAT]: () => text };
  method(t, 'Format', (layout: string) => formatGoLayout(d, layout));
  method(t, 'Unix', () => Math.floor(ms / 1000));
  method(t, 'UnixNano', () => ms * 1e6);
  method(t, 'IsZero', () => ms === -62135596800000);
  return t;
}

/** time.Format for the common layout elements (UTC). */
function formatGoLayout(d: Date, layout: string): string {
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  const months = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
  const days = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
  const tokens: [string, () => string][] = [
    ['2006', () => pad(d.getUTCFullYear(), 4)],
    ['January', () => months[d.getUTCMonth()]!],
    ['Jan', () => months[d.getUTCMonth()]!.slice(0, 3)],
    ['Monday', () => days[d.getUTCDay()]!],
    ['Mon', () => days[d.getUTCDay()]!.slice(0, 3)],
    ['MST', () => 'UTC'],
    ['Z07:00', () => 'Z'],
    ['-0700', () => '+0000'],
    ['01', () => pad(d.getUTCMonth() + 1)],
    ['02', () => pad(d.getUTCDate())],
    ['15', () => pad(d.getUTCHours())],
    ['03', () => pad(d.getUTCHours() % 12 || 12)],
    ['04', () => pad(d.getUTCMinutes())],
    ['05', () => pad(d.getUTCSeconds())],
    ['06', () => pad(d.getUTCFullYear() % 100)],
    ['PM', () => (d.getUTCHours() >= 12 ? 'PM' : 'AM')],
    ['.000', () => '.' + pad(d.getUTCMilliseconds(), 3)],
  ];
  let out = '';
  for (let i = 0; i < layout.length; ) {
    const hit = tokens.find(([t]) => layout.startsWith(t, i));
    if (hit) {
      out += hit[1]();
      i += hit[0].length;
    } else out += layout[i++];
  }
  return out;
}

export interface AlertInput {
  status: 'firing' | 'resolved';
  labels: KV;
  annotations: KV;
  startsAt: number;
  endsAt: number;
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

function alertsOf(list: object[]): object[] {
  const out = [...list];
  method(out, 'Firing', () => alertsOf(out.filter((a) => (a as { Status: string }).Status === 'firing')));
  method(out, 'Resolved', () => alertsOf(out.filter((a) => (a as { Status: string }).Status === 'resolved')));
  return out;
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
        StartsAt: goTime(a.startsAt),
        EndsAt: goTime(a.endsAt),
        GeneratorURL: a.generatorURL,
        Fingerprint: a.fingerprint,
      };
      return { ...o, [GO_TYPE]: 'template.Alert', [GO_FORMAT]: () => `{${Object.values(o).map((v) => formatValue(v, false)).join(' ')}}` };
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
  return { ...data, [GO_TYPE]: `${pointer ? '*' : ''}template.Data`, [GO_FORMAT]: () => `${pointer}{${Object.values(data).map((v) => formatValue(v, false)).join(' ')}}` };
}

/** Alertmanager's template functions (template.DefaultFuncs). */
export const ALERTMANAGER_FUNCS: Record<string, TemplateFunc> = {
  toUpper: (s) => String(s).toUpperCase(),
  toLower: (s) => String(s).toLowerCase(),
  // strings.Title: the first letter of every word upper case.
  title: (s) => String(s).replace(/(^|[^\p{L}\p{N}_'])(\p{L})/gu, (_, sep: string, c: string) => sep + c.toUpperCase()),
  join: (sep, list) => (list as string[]).join(String(sep)),
  match: (re, text) => RE2JS.compile(String(re)).matcher(String(text)).find(),
  reReplaceAll: (pattern, repl, text) => RE2JS.compile(String(pattern)).matcher(String(text)).replaceAll(String(repl).replace(/\$(\d+|\{\w+\})/g, (_, g: string) => '$' + g.replace(/[{}]/g, ''))),
  // template.HTML: printed unescaped where texts are escaped (HTML e-mail, Telegram's HTML mode).
  safeHtml: (s) => ({ [GO_FORMAT]: () => String(s), [SAFE_HTML]: true, toString: () => String(s) }),
  stringSlice: (...s) => s.map(String),
};
