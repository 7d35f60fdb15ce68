/**
 * config.Load / LoadFile of Alertmanager 0.25: strict decode, the cross-field checks and
 * inheritance of global settings into receivers, relative file paths joined with the config
 * directory, then the runtime view (route tree, inhibit rules, time intervals) the API uses.
 */
import { isAbsolute, join } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { ConfigError, decodeValue, isNullNode, type DecodeCtx, type Obj } from './decode.js';
import { emitYaml } from './goyaml.js';
import { configStruct, defaultGlobal, globalConfig, hostPortString, type UrlValue } from './schema.js';
import { goQuote } from '../timefmt.js';
import { buildRuntime, type RuntimeConfig } from './runtime.js';

export { ConfigError };

export interface LoadedConfig extends RuntimeConfig {
  /** The file text as read. */
  source: string;
  /** Config.String(): the re-marshalled configuration served as `config.original`. */
  original: string;
  /** The decoded tree (after inheritance), in Go field names. */
  tree: Obj;
}

/** Parse and validate an Alertmanager configuration. Throws ConfigError with Alertmanager's text. */
export function loadConfig(text: string, baseDir?: string): LoadedConfig {
  const lines = new LineCounter();
  const doc = parseDocument(text, { version: '1.1', lineCounter: lines, uniqueKeys: false, merge: false, prettyErrors: false });
  if (doc.errors.length > 0) throw new ConfigError(yamlSyntaxMessage(doc.errors[0]!, lines));
  const ctx: DecodeCtx = { doc, lines, typeErrors: [] };
  const root = doc.contents as Parameters<typeof decodeValue>[1];
  if (!root || isNullNode(root)) throw new ConfigError('no route provided in config');
  const cfg = decodeValue(configStruct, root, ctx);
  if (ctx.typeErrors.length > 0) throw new ConfigError(`yaml: unmarshal errors:\n  ${ctx.typeErrors.join('\n  ')}`);
  validateConfig(cfg);
  if (!cfg.route) throw new ConfigError('no route provided in config');
  if (cfg.route.continue) throw new ConfigError('cannot have continue in root route');
  if (baseDir !== undefined) resolveFilepaths(baseDir, cfg);
  addEmailHeaders(cfg);
  const original = emitYaml(configStruct.emit(cfg)!);
  return { ...buildRuntime(cfg), source: text, original, tree: cfg };
}

function yamlSyntaxMessage(e: { code: string; message: string; linePos?: [{ line: number; col: number }, ...unknown[]] }, _lines: LineCounter): string {
  const line = e.linePos?.[0]?.line ?? 1;
  const known: Record<string, string> = {
    BLOCK_AS_IMPLICIT_KEY: 'mapping values are not allowed in this context',
    MULTILINE_IMPLICIT_KEY: 'could not find expected \':\'',
    MISSING_CHAR: 'found unexpected end of stream',
    BAD_INDENT: 'did not find expected key',
    TAB_AS_INDENT: 'found character that cannot start any token',
    UNEXPECTED_TOKEN: 'did not find expected node content',
    BAD_ALIAS: 'unknown anchor referenced',
    DUPLICATE_KEY: 'mapping key already defined',
  };
  const text = known[e.code] ?? e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '').replace(/^./, (c) => c.toLowerCase());
  // Go's yaml names no line for a scanner error on the first line (its mark is 0 there).
  if (line === 1 && (e.code === 'BLOCK_AS_IMPLICIT_KEY' || e.code === 'TAB_AS_INDENT')) return `yaml: ${text}`;
  return `yaml: line ${line}: ${text}`;
}

function urlPathEndsWithSlash(u: UrlValue): void {
  const m = /^([a-z][a-z0-9+.-]*:\/\/[^/?#]*)([^?#]*)(.*)$/is.exec(u.href);
  if (!m) return;
  if (!m[2]!.endsWith('/')) u.href = m[1]! + m[2]! + '/' + m[3]!;
}

/** The checks and inheritance in Config.UnmarshalYAML, in its order. */
function validateConfig(c: Obj): void {
  const err = (m: string) => new ConfigError(m);
  if (!c.global) c.global = { ...globalConfig.zero(), ...defaultGlobal() };
  const g = c.global;
  if (g.slack_api_url && g.slack_api_url_file) throw err('at most one of slack_api_url & slack_api_url_file must be configured');
  if (g.opsgenie_api_key && g.opsgenie_api_key_file) throw err('at most one of opsgenie_api_key & opsgenie_api_key_file must be configured');
  if (g.victorops_api_key && g.victorops_api_key_file) throw err('at most one of victorops_api_key & victorops_api_key_file must be configured');
  if (g.smtp_auth_password && g.smtp_auth_password_file) throw err('at most one of smtp_auth_password & smtp_auth_password_file must be configured');

  const names = new Set<string>();
  for (const rcv of c.receivers as Obj[]) {
    if (names.has(rcv.name)) throw err(`notification config name ${goQuote(rcv.name)} is not unique`);
    const inheritHttp = (x: Obj) => {
      if (!x.http_config) x.http_config = g.http_config;
    };
    for (const wh of rcv.webhook_configs as Obj[]) inheritHttp(wh);
    for (const ec of rcv.email_configs as Obj[]) {
      if (hostPortString(ec.smarthost) === '') {
        if (hostPortString(g.smtp_smarthost) === '') throw err('no global SMTP smarthost set');
        ec.smarthost = g.smtp_smarthost;
      }
      if (ec.from === '') {
        if (!g.smtp_from) throw err('no global SMTP from set');
        ec.from = g.smtp_from;
      }
      if (ec.hello === '') ec.hello = g.smtp_hello;
      if (ec.auth_username === '') ec.auth_username = g.smtp_auth_username;
      if (ec.auth_password === '' && ec.auth_password_file === '') {
        ec.auth_password = g.smtp_auth_password;
        ec.auth_password_file = g.smtp_auth_password_file;
      }
      if (ec.auth_secret === '') ec.auth_secret = g.smtp_auth_secret;
      if (ec.auth_identity === '') ec.auth_identity = g.smtp_auth_identity;
      if (ec.require_tls === undefined) ec.require_tls = g.smtp_require_tls;
    }
    for (const sc of rcv.slack_configs as Obj[]) {
      inheritHttp(sc);
      if (!sc.api_url && !sc.api_url_file) {
        if (!g.slack_api_url && !g.slack_api_url_file) throw err('no global Slack API URL set either inline or in a file');
        sc.api_url = g.slack_api_url;
        sc.api_url_file = g.slack_api_url_file;
      }
    }
    for (const po of rcv.pushover_configs as Obj[]) inheritHttp(po);
    for (const pd of rcv.pagerduty_configs as Obj[]) {
      inheritHttp(pd);
      if (!pd.url) {
        if (!g.pagerduty_url) throw err('no global PagerDuty URL set');
        pd.url = g.pagerduty_url;
      }
    }
    for (const og of rcv.opsgenie_configs as Obj[]) {
      inheritHttp(og);
      if (!og.api_url) {
        if (!g.opsgenie_api_url) throw err('no global OpsGenie URL set');
        og.api_url = g.opsgenie_api_url;
      }
      urlPathEndsWithSlash(og.api_url);
      if (og.api_key === '' && og.api_key_file === '') {
        if (!g.opsgenie_api_key && !g.opsgenie_api_key_file) throw err('no global OpsGenie API Key set either inline or in a file');
        og.api_key = g.opsgenie_api_key;
        og.api_key_file = g.opsgenie_api_key_file;
      }
    }
    for (const wc of rcv.wechat_configs as Obj[]) {
      inheritHttp(wc);
      if (!wc.api_url) {
        if (!g.wechat_api_url) throw err('no global Wechat URL set');
        wc.api_url = g.wechat_api_url;
      }
      if (wc.api_secret === '') {
        if (!g.wechat_api_secret) throw err('no global Wechat ApiSecret set');
        wc.api_secret = g.wechat_api_secret;
      }
      if (wc.corp_id === '') {
        if (!g.wechat_api_corp_id) throw err('no global Wechat CorpID set');
        wc.corp_id = g.wechat_api_corp_id;
      }
      urlPathEndsWithSlash(wc.api_url);
    }
    for (const vo of rcv.victorops_configs as Obj[]) {
      inheritHttp(vo);
      if (!vo.api_url) {
        if (!g.victorops_api_url) throw err('no global VictorOps URL set');
        vo.api_url = g.victorops_api_url;
      }
      urlPathEndsWithSlash(vo.api_url);
      if (vo.api_key === '' && vo.api_key_file === '') {
        if (!g.victorops_api_key && !g.victorops_api_key_file) throw err('no global VictorOps API Key set');
        vo.api_key = g.victorops_api_key;
        vo.api_key_file = g.victorops_api_key_file;
      }
    }
    for (const sns of rcv.sns_configs as Obj[]) inheritHttp(sns);
    for (const tg of rcv.telegram_configs as Obj[]) {
      inheritHttp(tg);
      if (!tg.api_url) tg.api_url = g.telegram_api_url;
    }
    for (const dc of rcv.discord_configs as Obj[]) {
      inheritHttp(dc);
      if (!dc.webhook_url) throw err('no discord webhook URL provided');
    }
    for (const mt of rcv.msteams_configs as Obj[]) {
      inheritHttp(mt);
      if (!mt.webhook_url) throw err('no msteams webhook URL provided');
    }
    for (const wx of rcv.webex_configs as Obj[]) {
      inheritHttp(wx);
      if (!wx.api_url) {
        if (!g.webex_api_url) throw err('no global Webex URL set');
        wx.api_url = g.webex_api_url;
      }
    }
    names.add(rcv.name);
  }

  const r = c.route;
  if (!r) throw err('no routes provided');
  if (!r.receiver) throw err('root route must specify a default receiver');
  if (Object.keys(r.match ?? {}).length > 0 || Object.keys(r.match_re ?? {}).length > 0 || r.matchers.length > 0) {
    throw err('root route must not have any matchers');
  }
  if (r.mute_time_intervals.length > 0) throw err('root route must not have any mute time intervals');
  if (r.active_time_intervals.length > 0) throw err('root route must not have any active time intervals');
  checkReceiver(r, names);

  const tiNames = new Set<string>();
  for (const mt of c.mute_time_intervals as Obj[]) {
    if (tiNames.has(mt.name)) throw err(`mute time interval ${goQuote(mt.name)} is not unique`);
    tiNames.add(mt.name);
  }
  for (const ti of c.time_intervals as Obj[]) {
    if (tiNames.has(ti.name)) throw err(`time interval ${goQuote(ti.name)} is not unique`);
    tiNames.add(ti.name);
  }
  checkTimeIntervals(r, tiNames);
}

function checkReceiver(r: Obj, names: Set<string>): void {
  for (const sr of r.routes as Obj[]) checkReceiver(sr, names);
  if (!r.receiver) return;
  if (!names.has(r.receiver)) throw new ConfigError(`undefined receiver ${goQuote(r.receiver)} used in route`);
}

function checkTimeIntervals(r: Obj, names: Set<string>): void {
  for (const sr of r.routes as Obj[]) checkTimeIntervals(sr, names);
  for (const ti of [...r.active_time_intervals, ...r.mute_time_intervals] as string[]) {
    if (!names.has(ti)) throw new ConfigError(`undefined time interval ${goQuote(ti)} used in route`);
  }
}

/** LoadFile's resolveFilepaths: relative template and credential paths become absolute. */
function resolveFilepaths(baseDir: string, c: Obj): void {
  const joinDir = (p: string) => (p && !isAbsolute(p) ? join(baseDir, p) : p);
  c.templates = (c.templates as string[]).map(joinDir);
  const done = new Set<Obj>();
  const setDir = (h: Obj | undefined) => {
    if (!h || done.has(h)) return;
    done.add(h);
    const tls = (t: Obj | undefined) => {
      if (!t) return;
      t.ca_file = joinDir(t.ca_file);
      t.cert_file = joinDir(t.cert_file);
      t.key_file = joinDir(t.key_file);
    };
    tls(h.tls_config);
    if (h.basic_auth) h.basic_auth.password_file = joinDir(h.basic_auth.password_file);
    if (h.authorization) h.authorization.credentials_file = joinDir(h.authorization.credentials_file);
    if (h.oauth2) {
      h.oauth2.client_secret_file = joinDir(h.oauth2.client_secret_file);
      tls(h.oauth2.tls_config);
    }
    h.bearer_token_file = joinDir(h.bearer_token_file);
  };
  setDir(c.global.http_config);
  for (const rcv of c.receivers as Obj[]) {
    for (const kind of ['opsgenie_configs', 'pagerduty_configs', 'pushover_configs', 'slack_configs', 'victorops_configs', 'webhook_configs', 'wechat_configs', 'sns_configs', 'telegram_configs', 'discord_configs', 'webex_configs', 'msteams_configs']) {
      for (const x of rcv[kind] as Obj[]) setDir(x.http_config);
    }
  }
}

/**
 * Building an email integration (notify/email.New) fills in Subject, To and From headers, and
 * Alertmanager only builds receivers the route tree references; the marshalled config shows it.
 */
function addEmailHeaders(c: Obj): void {
  const used = new Set<string>();
  const walk = (r: Obj) => {
    if (r.receiver) used.add(r.receiver);
    for (const sub of r.routes as Obj[]) walk(sub);
  };
  walk(c.route);
  for (const rcv of c.receivers as Obj[]) {
    if (!used.has(rcv.name)) continue;
    for (const ec of rcv.email_configs as Obj[]) {
      const h = (ec.headers ??= {}) as Record<string, string>;
      if (!('Subject' in h)) h.Subject = '{{ template "email.default.subject" . }}';
      if (!('To' in h)) h.To = ec.to;
      if (!('From' in h)) h.From = ec.from;
    }
  }
}
