/**
 * Go values as templates see them, modelled on JavaScript values: strings, numbers (an `int` flag is
 * not kept: whole numbers print as ints), booleans, null (nil), arrays (slices), plain objects (maps,
 * printed with sorted keys) and objects that print themselves (structs: GO_FORMAT). Functions on an
 * object are its methods.
 */

/** An object that prints itself as Go's fmt would print it with %v (a struct, a time.Time, ...). */
export const GO_FORMAT = Symbol('goFormat');

export interface GoFormattable {
  [GO_FORMAT](): string;
}

/** What a missing key of this map yields: Go's zero value of a typed map (`map[string]string` gives ""). */
export const MAP_ZERO = Symbol('mapZero');

/** The Go type name `%T` prints for this object (`template.Alert`). */
export const GO_TYPE = Symbol('goType');

/** An object's encoding/json form, when it has its own (time.Time marshals as an RFC 3339 string). */
export const GO_JSON = Symbol('goJson');

/** A value the escaping mode prints as it is (html/template's template.HTML, from `safeHtml`). */
export const SAFE_HTML = Symbol('safeHtml');

/** An object's Go syntax (%#v), when it has its own (time.Time prints as time.Date(...)). */
export const GO_SYNTAX = Symbol('goSyntax');

/** A struct held by pointer (*template.Data): %+v and %#v print it with '&'. */
export const GO_POINTER = Symbol('goPointer');

/** A field or key the data does not have (text/template prints `<no value>`). */
export const NO_VALUE = Symbol('noValue');

export function isGoFormattable(v: unknown): v is GoFormattable {
  return typeof v === 'object' && v !== null && typeof (v as Partial<GoFormattable>)[GO_FORMAT] === 'function';
}

export function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !isGoFormattable(v) && Object.getPrototypeOf(v) === Object.prototype;
}

/** A float64 whose value is whole (a constant like 1e6): JavaScript would take it for an int. */
export class GoFloat {
  constructor(readonly value: number) {}
  valueOf(): number {
    return this.value;
  }
}

/** A Go named integer type that prints as a name (time.Month, time.Weekday): `{{ .Month }}` is January, %d 1. */
export const GO_INT = Symbol('goInt');

/** The number a value stands for, when it is one (int, float, big int, named int). */
export function numberOf(v: unknown): number | bigint | undefined {
  if (typeof v === 'number' || typeof v === 'bigint') return v;
  if (v instanceof GoFloat) return v.value;
  if (typeof v === 'object' && v !== null && GO_INT in v) return (v as Record<symbol, number>)[GO_INT];
  return undefined;
}

/** Whether a number value is a Go float64 (not an int). */
export function isFloat(v: unknown): boolean {
  return v instanceof GoFloat || (typeof v === 'number' && !Number.isInteger(v));
}

/** fmt's %v. */
export function formatValue(v: unknown, top = true): string {
  if (v === NO_VALUE) return '<no value>';
  if (v === null || v === undefined) return top ? '<no value>' : '<nil>';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return formatNumber(v);
  if (typeof v === 'bigint') return String(v);
  if (v instanceof GoFloat) return formatFloat(v.value);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (Array.isArray(v)) return '[' + v.map((x) => formatValue(x, false)).join(' ') + ']';
  if (isGoFormattable(v)) return v[GO_FORMAT]();
  if (isMap(v)) return 'map[' + Object.keys(v).sort().map((k) => `${k}:${formatValue(v[k], false)}`).join(' ') + ']';
  return String(v);
}

/** A number as %v prints it: ints plainly, floats as %g's shortest form. */
export function formatNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return String(n);
  return formatFloat(n);
}

/** strconv.FormatFloat(f, 'g', -1, 64), which %v uses: the shortest digits, as an exponent below 1e-4 and from 1e+06. */
export function formatFloat(n: number): string {
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : n < 0 ? '-Inf' : 'NaN';
  const [mant, e] = n.toExponential().split('e');
  const exp = Number(e);
  if (n !== 0 && (exp < -4 || exp >= 6)) return `${mant}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return Object.is(n, -0) ? '-0' : String(n);
}

/** text/template's truth: false, 0, "", nil, and empty slices and maps are false. */
export function truth(v: unknown): boolean {
  if (v === NO_VALUE || v === null || v === undefined) return false;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'bigint') return v !== 0n;
  if (v instanceof GoFloat) return v.value !== 0;
  if (typeof v === 'string') return v.length > 0;
  if (Array.isArray(v)) return v.length > 0;
  if (isMap(v)) return Object.keys(v).length > 0;
  return true;
}
