/**
 * Alertmanager 0.25's configuration types (config/config.go, config/notifiers.go,
 * prometheus/common config v0.38, timeinterval) as decode/marshal specs: field order, yaml keys,
 * omitempty, defaults and per-type validation messages follow the Go structs, so a file that
 * Alertmanager accepts is accepted here, errors read the same, and re-marshalling gives the
 * same `config.original`.
 */
import { ConfigError, F, O, bool, dict, int, list, parsed, str, struct, type Obj, type Spec } from './decode.js';
import { ystr } from './goyaml.js';
import { compareMatchers, parseMatchers, type Matcher } from '../matchers.js';
import { compileAnchored, RegexError } from '../regex.js';
import { formatGoDuration, formatModelDuration, goQuote, parseGoDuration, parseModelDuration } from '../timefmt.js';
import { LABEL_NAME_RE } from '../labels.js';

export const SECRET = '<secret>';

// ---- scalar types ----------------------------------------------------------------------------

/** config.Secret / commoncfg.Secret: marshals as `<secret>` when set, omitted/null when empty. */
export const secret: Spec<string> = {
  ...str,
  emit: (v) => (v ? ystr(SECRET) : undefined),
};

/** model.Duration (`5m`, `1d`); value in ms. */
export const modelDuration = parsed<number>('model.Duration', parseModelDuration, (v) => ystr(formatModelDuration(v)), {
  zero: () => 0,
  isZero: (v) => !v,
});

/** Go time.Duration via TextUnmarshaler (`1m0s`); value in ms. */
export const goDuration = parsed<number>('config.duration', parseGoDuration, (v) => ystr(formatGoDuration(v)), {
  zero: () => 0,
  isZero: (v) => !v,
});

/** A URL kept as a shared, mutable object: Alertmanager appends `/` to some in place. */
export interface UrlValue {
  href: string;
  /** `<secret>` placeholder read back from a marshalled config. */
  placeholder?: boolean;
}

/** Go url.Parse acceptance, roughly: a scheme (lower-cased) and no spaces or control characters in the host. */
function goUrlParse(s: string): { scheme: string; host: string; href: string } {
  if (/[\x00-\x1f\x7f]/.test(s)) throw new ConfigError(`parse ${goQuote(s)}: net/url: invalid control character in URL`);
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):(.*)$/s.exec(s);
  if (!m) {
    if (/^[^/?#]*:/.test(s)) throw new ConfigError(`parse ${goQuote(s)}: missing protocol scheme`);
    return { scheme: '', host: '', href: s };
  }
  const scheme = m[1]!.toLowerCase();
  const rest = m[2]!;
  let host = '';
  if (rest.startsWith('//')) {
    const authority = rest.slice(2).split(/[/?#]/, 1)[0]!;
    host = authority.includes('@') ? authority.slice(authority.lastIndexOf('@') + 1) : authority;
    if (/[\s<>"{}|\\^`]/.test(host)) throw new ConfigError(`parse ${goQuote(s)}: invalid character ${goQuote(host.match(/[\s<>"{}|\\^`]/)![0])} in host name`);
  }
  return { scheme, host, href: scheme + ':' + rest };
}

/** Alertmanager's config.URL: http or https with a host. */
function parseAmUrl(s: string): UrlValue {
  const u = goUrlParse(s);
  if (u.scheme !== 'http' && u.scheme !== 'https') throw new ConfigError(`unsupported scheme ${goQuote(u.scheme)} for URL`);
  if (u.host === '') throw new ConfigError('missing host for URL');
  return { href: u.href };
}

export const amUrl = parsed<UrlValue | undefined>('config.URL', parseAmUrl, (v) => ystr(v!.href));

export const secretUrl = parsed<UrlValue | undefined>(
  'config.SecretURL',
  (s) => (s === SECRET ? { href: '', placeholder: true } : parseAmUrl(s)),
  () => ystr(SECRET),
);

/** commoncfg.URL (proxy_url): any URL Go parses; the password is redacted when marshalled. */
export const commonUrl = parsed<UrlValue | undefined>(
  'config.URL',
  (s) => ({ href: goUrlParse(s).href }),
  (v) => ystr(v!.href.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/@:]*:)[^/@]*@/i, '$1xxxxx@')),
);

export interface HostPortValue {
  host: string;
  port: string;
}

/** net.SplitHostPort. */
function splitHostPort(s: string): HostPortValue {
  const missing = (why: string) => new ConfigError(`address ${s}: ${why}`);
  let host: string;
  let port: string;
  if (s.startsWith('[')) {
    const end = s.indexOf(']');
    if (end < 0) throw missing('missing \']\' in address');
    host = s.slice(1, end);
    const rest = s.slice(end + 1);
    if (rest === '') throw missing('missing port in address');
    if (rest[0] !== ':') throw missing('missing port in address');
    port = rest.slice(1);
    if (port.includes(':')) throw missing('too many colons in address');
  } else {
    const i = s.lastIndexOf(':');
    if (i < 0) throw missing('missing port in address');
    host = s.slice(0, i);
    port = s.slice(i + 1);
    if (host.includes(':')) throw missing('too many colons in address');
  }
  if (host.includes('[') || host.includes(']') || port.includes('[') || port.includes(']')) {
    throw missing(`unexpected '[' in address`);
  }
  if (port === '') throw new ConfigError(`address ${goQuote(s)}: port cannot be empty`);
  return { host, port };
}

export const hostPort: Spec<HostPortValue> = {
  go: 'config.HostPort',
  decode(n, ctx) {
    const s = str.decode(n, ctx, undefined);
    if (s === '') return { host: '', port: '' };
    return splitHostPort(s);
  },
  zero: () => ({ host: '', port: '' }),
  isZero: (v) => !v || (v.host === '' && v.port === ''),
  emit: (v) => ystr(v.host === '' && v.port === '' ? '' : `${v.host}:${v.port}`),
};

export function hostPortString(v: HostPortValue | undefined): string {
  return !v || (v.host === '' && v.port === '') ? '' : `${v.host}:${v.port}`;
}

/** config.Regexp: anchored on load, marshalled as the original text. */
export interface RegexpValue {
  source: string;
}

const regexp = parsed<RegexpValue | undefined>(
  'config.Regexp',
  (s) => {
    try {
      compileAnchored(s);
    } catch (e) {
      throw new ConfigError((e as RegexError).message);
    }
    return { source: s };
  },
  (v) => (v!.source !== '' ? ystr(v!.source) : undefined),
);

/** config.MatchRegexps: label name → regexp. */
const matchRegexps: Spec<Record<string, RegexpValue | undefined>> = {
  ...dict(regexp, 'config.plain'),
  go: 'config.MatchRegexps',
  decode(n, ctx) {
    const m = dict(regexp, 'config.plain').decode(n, ctx, undefined);
    for (const [k, v] of Object.entries(m)) {
      if (!LABEL_NAME_RE.test(k)) throw new ConfigError(`invalid label name ${goQuote(k)}`);
      if (!v) throw new ConfigError(`invalid regexp value for ${goQuote(k)}`);
    }
    return m;
  },
};

/** config.Matchers: a list of matcher strings, each possibly holding several; sorted on load. */
export const matchers: Spec<Matcher[]> = {
  go: 'config.Matchers',
  decode(n, ctx) {
    const lines = list(str).decode(n, ctx, undefined);
    const out: Matcher[] = [];
    for (const line of lines) {
      try {
        out.push(...parseMatchers(line));
      } catch (e) {
        throw new ConfigError((e as Error).message);
      }
    }
    return out.sort(compareMatchers);
  },
  zero: () => [],
  isZero: (v) => !v || v.length === 0,
  emit: (v) => ({ t: 'seq', items: v.map((m) => ystr(m.toString())) }),
};

/** model.LabelName in `equal:` lists. */
const labelName = parsed<string>(
  'model.LabelName',
  (s) => {
    if (!LABEL_NAME_RE.test(s)) throw new ConfigError(`${goQuote(s)} is not a valid label name`);
    return s;
  },
  (v) => ystr(v),
  { zero: () => '', isZero: (v) => v === '' },
);

/** map[string]string whose keys must be label names (route `match`, inhibit `*_match`). */
const labelMatchMap = dict(str);

function checkMatchKeys(m: Record<string, string> | undefined): void {
  for (const k of Object.keys(m ?? {})) if (!LABEL_NAME_RE.test(k)) throw new ConfigError(`invalid label name ${goQuote(k)}`);
}

// ---- prometheus/common HTTP client configuration ----------------------------------------------

const tlsConfig = struct('config.plain', [
  O('ca_file', str),
  O('cert_file', str),
  O('key_file', str),
  O('server_name', str),
  F('insecure_skip_verify', bool),
  O('min_version', parsed<string>('config.TLSVersion', checkTlsVersion, (v) => ystr(v), { zero: () => '', isZero: (v) => !v })),
  O('max_version', parsed<string>('config.TLSVersion', checkTlsVersion, (v) => ystr(v), { zero: () => '', isZero: (v) => !v })),
]);

function checkTlsVersion(s: string): string {
  if (!['TLS10', 'TLS11', 'TLS12', 'TLS13'].includes(s)) throw new ConfigError(`unknown TLS version: ${s}`);
  return s;
}

const basicAuth = struct('config.BasicAuth', [F('username', str), O('password', secret), O('password_file', str)]);
const authorization = struct('config.Authorization', [O('type', str), O('credentials', secret), O('credentials_file', str)]);
const oauth2 = struct('config.OAuth2', [
  F('client_id', str),
  F('client_secret', secret),
  F('client_secret_file', str),
  O('scopes', list(str)),
  F('token_url', str),
  O('endpoint_params', dict(str)),
  O('proxy_url', commonUrl),
  O('tls_config', tlsConfig),
]);

export const httpConfig = struct(
  'config.plain',
  [
    O('basic_auth', basicAuth, { ptr: true }),
    O('authorization', authorization, { ptr: true }),
    O('oauth2', oauth2, { ptr: true }),
    O('bearer_token', secret),
    O('bearer_token_file', str),
    O('proxy_url', commonUrl),
    O('tls_config', tlsConfig),
    F('follow_redirects', bool),
    F('enable_http2', bool),
  ],
  {
    defaults: () => ({ follow_redirects: true, enable_http2: true }),
    validate: validateHttpConfig,
  },
);

function validateHttpConfig(c: Obj): void {
  const err = (m: string) => new ConfigError(m);
  if (c.bearer_token && c.bearer_token_file) throw err('at most one of bearer_token & bearer_token_file must be configured');
  if ((c.basic_auth || c.oauth2) && (c.bearer_token || c.bearer_token_file)) {
    throw err('at most one of basic_auth, oauth2, bearer_token & bearer_token_file must be configured');
  }
  if (c.basic_auth && c.basic_auth.password && c.basic_auth.password_file) {
    throw err('at most one of basic_auth password & password_file must be configured');
  }
  if (c.authorization) {
    if (c.bearer_token || c.bearer_token_file) throw err('authorization is not compatible with bearer_token & bearer_token_file');
    if (c.authorization.credentials && c.authorization.credentials_file) {
      throw err('at most one of authorization credentials & credentials_file must be configured');
    }
    c.authorization.type = String(c.authorization.type ?? '').trim();
    if (c.authorization.type === '') c.authorization.type = 'Bearer';
    if (c.authorization.type.toLowerCase() === 'basic') {
      throw err('authorization type cannot be set to "basic", use "basic_auth" instead');
    }
    if (c.basic_auth || c.oauth2) throw err('at most one of basic_auth, oauth2 & authorization must be configured');
  } else {
    if (c.bearer_token) {
      c.authorization = { type: 'Bearer', credentials: c.bearer_token, credentials_file: '' };
      c.bearer_token = '';
    }
    if (c.bearer_token_file) {
      c.authorization = { type: 'Bearer', credentials: '', credentials_file: c.bearer_token_file };
      c.bearer_token_file = '';
    }
  }
  if (c.oauth2) {
    if (c.basic_auth) throw err('at most one of basic_auth, oauth2 & authorization must be configured');
    if (!c.oauth2.client_id) throw err('oauth2 client_id must be configured');
    if (!c.oauth2.client_secret && !c.oauth2.client_secret_file) {
      throw err('either oauth2 client_secret or client_secret_file must be configured');
    }
    if (!c.oauth2.token_url) throw err('oauth2 token_url must be configured');
    if (c.oauth2.client_secret && c.oauth2.client_secret_file) {
      throw err('at most one of oauth2 client_secret & client_secret_file must be configured');
    }
  }
}

/** A fresh default HTTP client config (follow_redirects and enable_http2 on). */
export function defaultHttpConfig(): Obj {
  return { ...httpConfig.zero(), follow_redirects: true, enable_http2: true };
}

// ---- global ----------------------------------------------------------------------------------

export const DEFAULT_GLOBAL_URLS = {
  pagerduty_url: 'https://events.pagerduty.com/v2/enqueue',
  opsgenie_api_url: 'https://api.opsgenie.com/',
  wechat_api_url: 'https://qyapi.weixin.qq.com/cgi-bin/',
  victorops_api_url: 'https://alert.victorops.com/integrations/generic/20131114/alert/',
  telegram_api_url: 'https://api.telegram.org',
  webex_api_url: 'https://webexapis.com/v1/messages',
};

export function defaultGlobal(): Obj {
  const o: Obj = {
    resolve_timeout: 5 * 60_000,
    http_config: defaultHttpConfig(),
    smtp_hello: 'localhost',
    smtp_require_tls: true,
  };
  for (const [k, v] of Object.entries(DEFAULT_GLOBAL_URLS)) o[k] = { href: v } satisfies UrlValue;
  return o;
}

export const globalConfig = struct(
  'config.plain',
  [
    F('resolve_timeout', modelDuration),
    O('http_config', httpConfig, { ptr: true }),
    O('smtp_from', str),
    O('smtp_hello', str),
    O('smtp_smarthost', hostPort),
    O('smtp_auth_username', str),
    O('smtp_auth_password', secret),
    O('smtp_auth_password_file', str),
    O('smtp_auth_secret', secret),
    O('smtp_auth_identity', str),
    F('smtp_require_tls', bool),
    O('slack_api_url', secretUrl, { ptr: true }),
    O('slack_api_url_file', str),
    O('pagerduty_url', amUrl, { ptr: true }),
    O('opsgenie_api_url', amUrl, { ptr: true }),
    O('opsgenie_api_key', secret),
    O('opsgenie_api_key_file', str),
    O('wechat_api_url', amUrl, { ptr: true }),
    O('wechat_api_secret', secret),
    O('wechat_api_corp_id', str),
    O('victorops_api_url', amUrl, { ptr: true }),
    O('victorops_api_key', secret),
    O('victorops_api_key_file', str),
    O('telegram_api_url', amUrl, { ptr: true }),
    O('webex_api_url', amUrl, { ptr: true }),
  ],
  { defaults: defaultGlobal },
);

// ---- routes, inhibit rules, time intervals ---------------------------------------------------

export const route: Spec<Obj> = struct(
  'config.plain',
  [
    O('receiver', str),
    O('group_by', list(str)),
    O('match', labelMatchMap),
    O('match_re', matchRegexps),
    O('matchers', matchers),
    O('mute_time_intervals', list(str)),
    O('active_time_intervals', list(str)),
    F('continue', bool),
    // Routes nest: the child spec refers to `route` lazily (it is not defined yet here).
    O('routes', list({ go: '*config.Route', decode: (n, ctx) => route.decode(n, ctx, undefined), zero: () => undefined, isZero: (v) => !v, emit: (v) => route.emit(v as Obj) } as Spec<any>)),
    O('group_wait', modelDuration, { ptr: true }),
    O('group_interval', modelDuration, { ptr: true }),
    O('repeat_interval', modelDuration, { ptr: true }),
  ],
  {
    validate(r) {
      checkMatchKeys(r.match);
      let all = false;
      const names: string[] = [];
      for (const l of r.group_by as string[]) {
        if (l === '...') all = true;
        else {
          if (!LABEL_NAME_RE.test(l)) throw new ConfigError(`invalid label name ${goQuote(l)} in group_by list`);
          names.push(l);
        }
      }
      if (names.length > 0 && all) {
        throw new ConfigError('cannot have wildcard group_by (`...`) and other other labels at the same time');
      }
      const seen = new Set<string>();
      for (const l of names) {
        if (seen.has(l)) throw new ConfigError(`duplicated label ${goQuote(l)} in group_by`);
        seen.add(l);
      }
      if (r.group_interval === 0) throw new ConfigError('group_interval cannot be zero');
      if (r.repeat_interval === 0) throw new ConfigError('repeat_interval cannot be zero');
    },
  },
);

export const inhibitRule = struct(
  'config.plain',
  [
    O('source_match', labelMatchMap),
    O('source_match_re', matchRegexps),
    O('source_matchers', matchers),
    O('target_match', labelMatchMap),
    O('target_match_re', matchRegexps),
    O('target_matchers', matchers),
    O('equal', list(labelName, { go: 'model.LabelNames' })),
  ],
  {
    validate(r) {
      checkMatchKeys(r.source_match);
      checkMatchKeys(r.target_match);
    },
  },
);

// timeinterval ranges: kept as {begin, end}; marshalled as `a:b` (or `a` when equal).
interface Range {
  begin: number;
  end: number;
}

const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

function goAtoi(s: string): number {
  if (!/^[+-]?\d+$/.test(s)) throw new Error(`strconv.Atoi: parsing ${goQuote(s)}: invalid syntax`);
  return Number(s);
}

function rangeFromString(input: string, member: (s: string) => number): Range {
  const s = input.toLowerCase();
  if (s.includes(':')) {
    const parts = s.split(':');
    if (parts.length !== 2) throw new ConfigError(`couldn't parse range ${s}, invalid format`);
    return { begin: member(parts[0]!), end: member(parts[1]!) };
  }
  const v = member(s);
  return { begin: v, end: v };
}

const rangeText = (r: Range, name: (n: number) => string = String) =>
  r.begin === r.end ? name(r.begin) : `${name(r.begin)}:${name(r.end)}`;

const weekdayRange = parsed<Range>(
  'timeinterval.WeekdayRange',
  (s) => {
    const r = rangeFromString(s, (m) => {
      const i = WEEKDAYS.indexOf(m);
      if (i < 0) throw new ConfigError(`${m} is not a valid weekday`);
      return i;
    });
    if (r.begin > r.end) throw new ConfigError('start day cannot be before end day');
    return r;
  },
  (r) => ystr(rangeText(r, (n) => WEEKDAYS[n]!)),
);

const dayOfMonthRange = parsed<Range>(
  'timeinterval.DayOfMonthRange',
  (s) => {
    const r = rangeFromString(s, goAtoi);
    if (r.begin === 0 || r.begin < -31 || r.begin > 31) throw new ConfigError(`${r.begin} is not a valid day of the month: out of range`);
    if (r.end === 0 || r.end < -31 || r.end > 31) throw new ConfigError(`${r.end} is not a valid day of the month: out of range`);
    if (r.begin < 0 && r.end > 0) throw new ConfigError('end day must be negative if start day is negative');
    const b = r.begin < 0 ? 28 + r.begin : r.begin;
    const e = r.end < 0 ? 28 + r.end : r.end;
    if (b > e) throw new ConfigError(`end day ${r.end} is always before start day ${r.begin}`);
    return r;
  },
  (r) => ystr(rangeText(r)),
);

const monthRange = parsed<Range>(
  'timeinterval.MonthRange',
  (s) => {
    const r = rangeFromString(s, (m) => {
      const i = MONTHS.indexOf(m);
      if (i >= 0) return i + 1;
      try {
        return goAtoi(m);
      } catch {
        throw new ConfigError(`${m} is not a valid month`);
      }
    });
    if (r.begin > r.end) throw new ConfigError(`end month ${MONTHS[r.end - 1] ?? ''} is before start month ${MONTHS[r.begin - 1] ?? ''}`);
    return r;
  },
  (r) => ystr(rangeText(r)),
);

const yearRange = parsed<Range>(
  'timeinterval.YearRange',
  (s) => {
    const r = rangeFromString(s, goAtoi);
    if (r.begin > r.end) throw new ConfigError(`end year ${r.end} is before start year ${r.begin}`);
    return r;
  },
  (r) => ystr(rangeText(r)),
);

const TIME_RE = /^((([01][0-9])|(2[0-3])):[0-5][0-9])$|(^24:00$)/;

function parseClock(s: string): number {
  if (!TIME_RE.test(s)) throw new ConfigError(`couldn't parse timestamp ${s}, invalid format`);
  const [h, m] = s.split(':').map(Number);
  return h! * 60 + m!;
}

const yamlTimeRange = struct('timeinterval.yamlTimeRange', [F('start_time', str), F('end_time', str)]);

export interface TimeRangeValue {
  startMinute: number;
  endMinute: number;
}

const timeRange: Spec<TimeRangeValue | undefined> = {
  go: 'timeinterval.TimeRange',
  decode(n, ctx) {
    const before = ctx.typeErrors.length;
    const y = yamlTimeRange.decode(n, ctx, undefined);
    if (ctx.typeErrors.length > before) return undefined;
    if (!y.end_time || !y.start_time) throw new ConfigError('both start and end times must be provided');
    const start = parseClock(y.start_time);
    const end = parseClock(y.end_time);
    if (start >= end) throw new ConfigError('start time cannot be equal or greater than end time');
    return { startMinute: start, endMinute: end };
  },
  zero: () => undefined,
  isZero: (v) => !v,
  emit(v) {
    const hhmm = (n: number) => `${String(Math.floor(n / 60)).padStart(2, '0')}:${String(n % 60).padStart(2, '0')}`;
    return { t: 'map', entries: [['start_time', ystr(hhmm(v!.startMinute))], ['end_time', ystr(hhmm(v!.endMinute))]] };
  },
};

const location = parsed<string>(
  'timeinterval.Location',
  (s) => {
    if (s === '' || s === 'UTC' || s === 'Local') return s === '' ? 'UTC' : s;
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: s });
    } catch {
      throw new ConfigError(`unknown time zone ${s}`);
    }
    return s;
  },
  (v) => ystr(v),
  { zero: () => '', isZero: (v) => !v },
);

export const timeIntervalBody = struct('timeinterval.TimeInterval', [
  O('times', list(timeRange)),
  O('weekdays', list(weekdayRange), { flow: true }),
  O('days_of_month', list(dayOfMonthRange), { flow: true }),
  O('months', list(monthRange), { flow: true }),
  O('years', list(yearRange), { flow: true }),
  O('location', location, { ptr: true }),
]);

function namedIntervals(what: string) {
  return struct('config.plain', [F('name', str), F('time_intervals', list(timeIntervalBody))], {
    validate(o) {
      if (o.name === '') throw new ConfigError(`missing name in ${what}`);
    },
  });
}

export const muteTimeInterval = namedIntervals('mute time interval');
export const timeInterval = namedIntervals('time interval');

// ---- receivers -------------------------------------------------------------------------------

const http = O('http_config', httpConfig, { ptr: true });

function notifier(fields: ReturnType<typeof F>[], defaults: Obj, validate?: (o: Obj) => void) {
  return struct('config.plain', [F('send_resolved', bool), ...fields], { defaults: () => ({ ...structuredClone(defaults) }), validate });
}

const tmpl = (name: string) => `{{ template "${name}" . }}`;

const webhookConfig = notifier([http, F('url', amUrl, { ptr: true }), F('max_alerts', int('uint64'))], { send_resolved: true }, (c) => {
  if (!c.url) throw new ConfigError('missing URL in webhook config');
});

const webexConfig = notifier(
  [http, O('api_url', amUrl, { ptr: true }), O('message', str), F('room_id', str)],
  { send_resolved: true, message: tmpl('webex.default.message') },
  (c) => {
    if (c.room_id === '') throw new ConfigError('missing room_id on webex_config');
    if (!c.http_config || !c.http_config.authorization) throw new ConfigError('missing webex_configs.http_config.authorization');
  },
);

const discordConfig = notifier(
  [http, O('webhook_url', secretUrl, { ptr: true }), O('title', str), O('message', str)],
  { send_resolved: true, title: tmpl('discord.default.title'), message: tmpl('discord.default.message') },
);

const emailConfig = notifier(
  [
    O('to', str),
    O('from', str),
    O('hello', str),
    O('smarthost', hostPort),
    O('auth_username', str),
    O('auth_password', secret),
    O('auth_password_file', str),
    O('auth_secret', secret),
    O('auth_identity', str),
    O('headers', dict(str)),
    O('html', str),
    O('text', str),
    O('require_tls', bool, { ptr: true }),
    O('tls_config', tlsConfig),
  ],
  { send_resolved: false, html: tmpl('email.default.html'), text: '' },
  (c) => {
    if (c.to === '') throw new ConfigError('missing to address in email config');
    const norm: Record<string, string> = {};
    for (const [h, v] of Object.entries(c.headers as Record<string, string>)) {
      const k = canonicalMimeHeaderKey(h);
      if (k in norm) throw new ConfigError(`duplicate header ${goQuote(k)} in email config`);
      norm[k] = v;
    }
    c.headers = norm;
  },
);

/** textproto.CanonicalMIMEHeaderKey: `content-type` → `Content-Type` (unchanged if it has invalid bytes). */
function canonicalMimeHeaderKey(s: string): string {
  if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(s)) return s;
  return s
    .split('-')
    .map((p) => (p ? p[0]!.toUpperCase() + p.slice(1).toLowerCase() : p))
    .join('-');
}

const pagerdutyLink = struct('config.PagerdutyLink', [O('href', str), O('text', str)]);
const pagerdutyImage = struct('config.PagerdutyImage', [O('src', str), O('alt', str), O('href', str)]);

const DEFAULT_PAGERDUTY_DETAILS: Record<string, string> = {
  firing: '{{ template "pagerduty.default.instances" .Alerts.Firing }}',
  resolved: '{{ template "pagerduty.default.instances" .Alerts.Resolved }}',
  num_firing: '{{ .Alerts.Firing | len }}',
  num_resolved: '{{ .Alerts.Resolved | len }}',
};

const pagerdutyConfig = notifier(
  [
    http,
    O('service_key', secret),
    O('service_key_file', str),
    O('routing_key', secret),
    O('routing_key_file', str),
    O('url', amUrl, { ptr: true }),
    O('client', str),
    O('client_url', str),
    O('description', str),
    O('details', dict(str)),
    O('images', list(pagerdutyImage)),
    O('links', list(pagerdutyLink)),
    O('source', str),
    O('severity', str),
    O('class', str),
    O('component', str),
    O('group', str),
  ],
  {
    send_resolved: true,
    description: '{{ template "pagerduty.default.description" .}}',
    client: tmpl('pagerduty.default.client'),
    client_url: tmpl('pagerduty.default.clientURL'),
  },
  (c) => {
    if (!c.routing_key && !c.service_key && !c.routing_key_file && !c.service_key_file) {
      throw new ConfigError('missing service or routing key in PagerDuty config');
    }
    if (c.routing_key && c.routing_key_file) throw new ConfigError('at most one of routing_key & routing_key_file must be configured');
    if (c.service_key && c.service_key_file) throw new ConfigError('at most one of service_key & service_key_file must be configured');
    c.details = c.details ?? {};
    if (c.source === '') c.source = c.client;
    for (const [k, v] of Object.entries(DEFAULT_PAGERDUTY_DETAILS)) if (!(k in c.details)) c.details[k] = v;
  },
);

const slackConfirm = struct(
  'config.plain',
  [O('text', str), O('title', str), O('ok_text', str), O('dismiss_text', str)],
  {
    validate(c) {
      if (c.text === '') throw new ConfigError('missing text in Slack confirmation configuration');
    },
  },
);

const slackAction = struct(
  'config.plain',
  [O('type', str), O('text', str), O('url', str), O('style', str), O('name', str), O('value', str), O('confirm', slackConfirm, { ptr: true })],
  {
    validate(c) {
      if (c.type === '') throw new ConfigError('missing type in Slack action configuration');
      if (c.text === '') throw new ConfigError('missing text in Slack action configuration');
      if (c.url !== '') {
        c.name = '';
        c.value = '';
        c.confirm = undefined;
      } else if (c.name !== '') {
        c.url = '';
      } else throw new ConfigError('missing name or url in Slack action configuration');
    },
  },
);

const slackField = struct('config.plain', [O('title', str), O('value', str), O('short', bool, { ptr: true })], {
  validate(c) {
    if (c.title === '') throw new ConfigError('missing title in Slack field configuration');
    if (c.value === '') throw new ConfigError('missing value in Slack field configuration');
  },
});

const slackConfig = notifier(
  [
    http,
    O('api_url', secretUrl, { ptr: true }),
    O('api_url_file', str),
    O('channel', str),
    O('username', str),
    O('color', str),
    O('title', str),
    O('title_link', str),
    O('pretext', str),
    O('text', str),
    O('fields', list(slackField)),
    F('short_fields', bool),
    O('footer', str),
    O('fallback', str),
    O('callback_id', str),
    O('icon_emoji', str),
    O('icon_url', str),
    O('image_url', str),
    O('thumb_url', str),
    F('link_names', bool),
    O('mrkdwn_in', list(str)),
    O('actions', list(slackAction)),
  ],
  {
    send_resolved: false,
    color: '{{ if eq .Status "firing" }}danger{{ else }}good{{ end }}',
    username: tmpl('slack.default.username'),
    title: tmpl('slack.default.title'),
    title_link: tmpl('slack.default.titlelink'),
    icon_emoji: tmpl('slack.default.iconemoji'),
    icon_url: tmpl('slack.default.iconurl'),
    pretext: tmpl('slack.default.pretext'),
    text: tmpl('slack.default.text'),
    fallback: tmpl('slack.default.fallback'),
    callback_id: tmpl('slack.default.callbackid'),
    footer: tmpl('slack.default.footer'),
  },
  (c) => {
    if (c.api_url && c.api_url_file) throw new ConfigError('at most one of api_url & api_url_file must be configured');
  },
);

const wechatConfig = notifier(
  [
    http,
    O('api_secret', secret),
    O('corp_id', str),
    O('message', str),
    O('api_url', amUrl, { ptr: true }),
    O('to_user', str),
    O('to_party', str),
    O('to_tag', str),
    O('agent_id', str),
    O('message_type', str),
  ],
  {
    send_resolved: false,
    message: tmpl('wechat.default.message'),
    to_user: tmpl('wechat.default.to_user'),
    to_party: tmpl('wechat.default.to_party'),
    to_tag: tmpl('wechat.default.to_tag'),
    agent_id: tmpl('wechat.default.agent_id'),
  },
  (c) => {
    if (c.message_type === '') c.message_type = 'text';
    if (!/^(text|markdown)$/.test(c.message_type)) {
      throw new ConfigError(`weChat message type ${goQuote(c.message_type)} does not match valid options ^(text|markdown)$`);
    }
  },
);

const opsgenieResponder = struct('config.OpsGenieConfigResponder', [O('id', str), O('name', str), O('username', str), O('type', str)]);

const opsgenieConfig = notifier(
  [
    http,
    O('api_key', secret),
    O('api_key_file', str),
    O('api_url', amUrl, { ptr: true }),
    O('message', str),
    O('description', str),
    O('source', str),
    O('details', dict(str)),
    O('entity', str),
    O('responders', list(opsgenieResponder)),
    O('actions', str),
    O('tags', str),
    O('note', str),
    O('priority', str),
    O('update_alerts', bool),
  ],
  {
    send_resolved: true,
    message: tmpl('opsgenie.default.message'),
    description: tmpl('opsgenie.default.description'),
    source: tmpl('opsgenie.default.source'),
  },
  (c) => {
    if (c.api_key && c.api_key_file) throw new ConfigError('at most one of api_key & api_key_file must be configured');
    for (const r of c.responders as Obj[]) {
      const shown = `{${r.id} ${r.name} ${r.username} ${r.type}}`;
      if (!r.id && !r.username && !r.name) {
        throw new ConfigError(`opsGenieConfig responder ${shown} has to have at least one of id, username or name specified`);
      }
      // Go lower-cases a copy of the responder (range by value): the stored type keeps its case.
      const type = String(r.type);
      if (!type.includes('{{') && !/^(team|teams|user|escalation|schedule)$/.test(type.toLowerCase())) {
        throw new ConfigError(
          `opsGenieConfig responder {${r.id} ${r.name} ${r.username} ${type.toLowerCase()}} type does not match valid options ^(team|teams|user|escalation|schedule)$`,
        );
      }
    }
  },
);

const victoropsConfig = notifier(
  [
    http,
    O('api_key', secret),
    O('api_key_file', str),
    F('api_url', amUrl, { ptr: true }),
    F('routing_key', str),
    F('message_type', str),
    F('state_message', str),
    F('entity_display_name', str),
    F('monitoring_tool', str),
    O('custom_fields', dict(str)),
  ],
  {
    send_resolved: true,
    message_type: 'CRITICAL',
    state_message: tmpl('victorops.default.state_message'),
    entity_display_name: tmpl('victorops.default.entity_display_name'),
    monitoring_tool: tmpl('victorops.default.monitoring_tool'),
  },
  (c) => {
    if (c.routing_key === '') throw new ConfigError('missing Routing key in VictorOps config');
    if (c.api_key && c.api_key_file) throw new ConfigError('at most one of api_key & api_key_file must be configured');
    for (const f of ['routing_key', 'message_type', 'state_message', 'entity_display_name', 'monitoring_tool', 'entity_id', 'entity_state']) {
      if (c.custom_fields && f in c.custom_fields) {
        throw new ConfigError(
          `victorOps config contains custom field ${f} which cannot be used as it conflicts with the fixed/static fields`,
        );
      }
    }
  },
);

const pushoverConfig = notifier(
  [
    http,
    O('user_key', secret),
    O('token', secret),
    // ctl addition: where the messages go (Pushover's API by default).
    O('api_url', str),
    O('title', str),
    O('message', str),
    O('url', str),
    O('url_title', str),
    O('sound', str),
    O('priority', str),
    O('retry', goDuration),
    O('expire', goDuration),
    F('html', bool),
  ],
  {
    send_resolved: true,
    title: tmpl('pushover.default.title'),
    message: tmpl('pushover.default.message'),
    url: tmpl('pushover.default.url'),
    priority: '{{ if eq .Status "firing" }}2{{ else }}0{{ end }}',
    retry: 60_000,
    expire: 3_600_000,
    html: false,
  },
  (c) => {
    if (c.user_key === '') throw new ConfigError('missing user key in Pushover config');
    if (c.token === '') throw new ConfigError('missing token in Pushover config');
  },
);

const sigv4 = struct('sigv4.plain', [O('region', str), O('access_key', str), O('secret_key', secret), O('profile', str), O('role_arn', str)], {
  validate(c) {
    if ((c.access_key === '') !== (c.secret_key === '')) {
      throw new ConfigError('must provide a AWS SigV4 Access key and Secret Key if credentials are specified in the SigV4 config');
    }
  },
});

const snsConfig = notifier(
  [
    http,
    O('api_url', str),
    F('sigv4', sigv4),
    O('topic_arn', str),
    O('phone_number', str),
    O('target_arn', str),
    O('subject', str),
    O('message', str),
    O('attributes', dict(str)),
  ],
  { send_resolved: true, subject: tmpl('sns.default.subject'), message: tmpl('sns.default.message') },
  (c) => {
    // Go: (TargetARN == "") != (TopicARN == "") != (PhoneNumber == "")
    if (((c.target_arn === '') !== (c.topic_arn === '')) !== (c.phone_number === '')) {
      throw new ConfigError('must provide either a Target ARN, Topic ARN, or Phone Number for SNS config');
    }
  },
);

const telegramConfig = notifier(
  [
    http,
    F('api_url', amUrl, { ptr: true }),
    O('bot_token', secret),
    O('chat_id', int('int64')),
    O('message', str),
    O('disable_notifications', bool),
    O('parse_mode', str),
  ],
  { send_resolved: true, disable_notifications: false, message: tmpl('telegram.default.message'), parse_mode: 'HTML' },
  (c) => {
    if (c.bot_token === '') throw new ConfigError('missing bot_token on telegram_config');
    if (c.chat_id === 0) throw new ConfigError('missing chat_id on telegram_config');
    if (c.parse_mode !== '' && !['Markdown', 'MarkdownV2', 'HTML'].includes(c.parse_mode)) {
      throw new ConfigError('unknown parse_mode on telegram_config, must be Markdown, MarkdownV2, HTML or empty string');
    }
  },
);

/** Microsoft Teams (Alertmanager 0.26's msteams_configs; ctl adds it to 0.25's set). */
const msteamsConfig = notifier(
  [http, O('webhook_url', secretUrl, { ptr: true }), O('title', str), O('summary', str), O('text', str)],
  { send_resolved: true, title: tmpl('msteams.default.title'), summary: tmpl('msteams.default.summary'), text: tmpl('msteams.default.text') },
);

/** Integration kinds in Receiver struct order. */
export const INTEGRATIONS = [
  'discord_configs',
  'email_configs',
  'pagerduty_configs',
  'slack_configs',
  'webhook_configs',
  'opsgenie_configs',
  'wechat_configs',
  'pushover_configs',
  'victorops_configs',
  'sns_configs',
  'telegram_configs',
  'webex_configs',
  'msteams_configs',
] as const;

const ptrList = (s: Spec<Obj>) => list({ ...s, go: `*${s.go}` } as Spec<Obj>);

export const receiver = struct(
  'config.plain',
  [
    F('name', str),
    O('discord_configs', ptrList(discordConfig)),
    O('email_configs', ptrList(emailConfig)),
    O('pagerduty_configs', ptrList(pagerdutyConfig)),
    O('slack_configs', ptrList(slackConfig)),
    O('webhook_configs', ptrList(webhookConfig)),
    O('opsgenie_configs', ptrList(opsgenieConfig)),
    O('wechat_configs', ptrList(wechatConfig)),
    O('pushover_configs', ptrList(pushoverConfig)),
    O('victorops_configs', ptrList(victoropsConfig)),
    O('sns_configs', ptrList(snsConfig)),
    O('telegram_configs', ptrList(telegramConfig)),
    O('webex_configs', ptrList(webexConfig)),
    O('msteams_configs', ptrList(msteamsConfig)),
  ],
  {
    validate(c) {
      if (c.name === '') throw new ConfigError('missing name in receiver');
    },
  },
);

/** The top-level Config struct (its own cross-field checks live in load.ts). */
export const configStruct = struct('config.plain', [
  O('global', globalConfig, { ptr: true }),
  O('route', route, { ptr: true }),
  O('inhibit_rules', ptrList(inhibitRule)),
  O('receivers', ptrList(receiver)),
  F('templates', list(str)),
  O('mute_time_intervals', list(muteTimeInterval)),
  O('time_intervals', list(timeInterval)),
]);
