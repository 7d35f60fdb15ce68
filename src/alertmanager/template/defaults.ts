/**
 * ctl's default notification texts: the named templates receivers use when their configuration
 * leaves a field to the default (`slack.default.title`, `pagerduty.default.description`, ...). The
 * text each produces is what Alertmanager 0.25's defaults produce for the same data (the golden tests
 * render both, through amtool, and compare bytes); the texts are built here by functions, and the
 * named templates only call them, so user templates can still call or redefine every name.
 */
import type { TemplateFunc } from '../../gotemplate/index.js';
import { emailPagePart } from './email-page.js';

type Pairs = { Name: string; Value: string }[] & { Values(): string[] };
interface KV {
  SortedPairs(): Pairs;
  Names(): string[];
  Remove(keys: string[]): KV;
}
interface TAlert {
  Labels: KV;
  Annotations: KV;
  GeneratorURL: string;
}
interface TData {
  Receiver: string;
  Status: string;
  Alerts: TAlert[] & { Firing(): TAlert[]; Resolved(): TAlert[] };
  GroupLabels: KV & Record<string, string>;
  CommonLabels: KV & Record<string, string>;
  CommonAnnotations: KV;
  ExternalURL: string;
}

const size = (kv: object) => Object.keys(kv).length;

/** url.QueryEscape. */
function queryEscape(s: string): string {
  return encodeURIComponent(s).replace(/%20/g, '+').replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
}

/** `[FIRING:2] group values (other common values)`. */
export function subjectOf(d: TData): string {
  const count = d.Status === 'firing' ? `:${d.Alerts.Firing().length}` : '';
  let out = `[${d.Status.toUpperCase()}${count}] ${d.GroupLabels.SortedPairs().Values().join(' ')} `;
  if (size(d.CommonLabels) > size(d.GroupLabels)) {
    const rest = d.CommonLabels.Remove(d.GroupLabels.Names());
    out += `(${size(rest) > 0 ? rest.SortedPairs().Values().join(' ') : ''})`;
  }
  return out;
}

export function alertmanagerUrlOf(d: TData): string {
  return `${d.ExternalURL}/#/alerts?receiver=${queryEscape(d.Receiver)}`;
}

/** Each alert's labels, annotations and source, one per line. */
export function alertListOf(alerts: TAlert[]): string {
  let out = '';
  for (const a of alerts) {
    out += 'Labels:\n';
    for (const p of a.Labels.SortedPairs()) out += ` - ${p.Name} = ${p.Value}\n`;
    out += 'Annotations:\n';
    for (const p of a.Annotations.SortedPairs()) out += ` - ${p.Name} = ${p.Value}\n`;
    out += `Source: ${a.GeneratorURL}\n`;
  }
  return out;
}

/** `Alerts Firing:` / `Alerts Resolved:` and the list, or "" when there are none. */
function section(title: string, alerts: TAlert[]): string {
  return alerts.length > 0 ? `${title}:\n${alertListOf(alerts)}` : '';
}

const annotationValues = (d: TData) => d.CommonAnnotations.SortedPairs().Values().join(' ');

/** Opsgenie's description and VictorOps' state message: the sections packed line to line. */
function packedDetailsOf(d: TData): string {
  return `${annotationValues(d)}\n${section('Alerts Firing', d.Alerts.Firing())}\n${section('Alerts Resolved', d.Alerts.Resolved())}`;
}

/** Pushover, SNS, Webex (after the annotation values) and Telegram, Discord (after nothing): each section between blank lines. */
function spacedDetailsOf(head: string, d: TData): string {
  const block = (title: string, alerts: TAlert[]) => (alerts.length > 0 ? `\n${section(title, alerts)}\n` : '');
  return `${head}\n${block('Alerts Firing', d.Alerts.Firing())}\n${block('Alerts Resolved', d.Alerts.Resolved())}\n`;
}

/** WeChat's message: subject, annotation values, the packed sections and the Alertmanager link. */
function wechatMessageOf(d: TData): string {
  return `${subjectOf(d)}\n${packedDetailsOf(d)}\nAlertmanagerUrl:\n${alertmanagerUrlOf(d)}`;
}

/** Microsoft Teams' text (Alertmanager 0.26 added the receiver): each alert's description as a Markdown list item. */
function teamsTextOf(d: TData): string {
  const block = (title: string, alerts: TAlert[]) =>
    alerts.length > 0 ? `\n# ${title}:\n${alerts.map((a) => ` - ${(a.Annotations as unknown as Record<string, string>).description ?? ''}\n`).join('')}\n` : '';
  return `\n${block('Alerts Firing', d.Alerts.Firing())}\n${block('Alerts Resolved', d.Alerts.Resolved())}\n`;
}

/** The functions the default templates call (names no user template is likely to use). */
export const DEFAULT_TEXT_FUNCS: Record<string, TemplateFunc> = {
  ctlSubject: (d) => subjectOf(d as TData),
  ctlAlertmanagerURL: (d) => alertmanagerUrlOf(d as TData),
  ctlAlertList: (alerts) => alertListOf(alerts as TAlert[]),
  ctlPackedDetails: (d) => packedDetailsOf(d as TData),
  ctlSpacedDetails: (d) => spacedDetailsOf(annotationValues(d as TData), d as TData),
  ctlSpacedAlerts: (d) => spacedDetailsOf('', d as TData),
  ctlWechatMessage: (d) => wechatMessageOf(d as TData),
  ctlTeamsText: (d) => teamsTextOf(d as TData),
  // The pieces of 0.25's HTML e-mail page, already HTML (email-page.ts).
  ctlEmailPage: emailPagePart,
};

/** Named default templates: each calls the function that writes its text. */
export const DEFAULT_TEMPLATES = [
  ['__alertmanager', 'Alertmanager'],
  ['__alertmanagerURL', '{{ ctlAlertmanagerURL . }}'],
  ['__subject', '{{ ctlSubject . }}'],
  ['__description', ''],
  ['__text_alert_list', '{{ ctlAlertList . }}'],
  ['slack.default.title', '{{ template "__subject" . }}'],
  ['slack.default.username', '{{ template "__alertmanager" . }}'],
  ['slack.default.fallback', '{{ template "slack.default.title" . }} | {{ template "slack.default.titlelink" . }}'],
  ['slack.default.callbackid', ''],
  ['slack.default.pretext', ''],
  ['slack.default.titlelink', '{{ template "__alertmanagerURL" . }}'],
  ['slack.default.iconemoji', ''],
  ['slack.default.iconurl', ''],
  ['slack.default.text', ''],
  ['slack.default.footer', ''],
  ['pagerduty.default.description', '{{ template "__subject" . }}'],
  ['pagerduty.default.client', '{{ template "__alertmanager" . }}'],
  ['pagerduty.default.clientURL', '{{ template "__alertmanagerURL" . }}'],
  ['pagerduty.default.instances', '{{ template "__text_alert_list" . }}'],
  ['opsgenie.default.message', '{{ template "__subject" . }}'],
  ['opsgenie.default.description', '{{ ctlPackedDetails . }}'],
  ['opsgenie.default.source', '{{ template "__alertmanagerURL" . }}'],
  ['wechat.default.message', '{{ ctlWechatMessage . }}'],
  ['wechat.default.to_user', ''],
  ['wechat.default.to_party', ''],
  ['wechat.default.to_tag', ''],
  ['wechat.default.agent_id', ''],
  ['victorops.default.state_message', '{{ ctlPackedDetails . }}'],
  ['victorops.default.entity_display_name', '{{ template "__subject" . }}'],
  ['victorops.default.monitoring_tool', '{{ template "__alertmanager" . }}'],
  ['pushover.default.title', '{{ template "__subject" . }}'],
  ['pushover.default.message', '{{ ctlSpacedDetails . }}'],
  ['pushover.default.url', '{{ template "__alertmanagerURL" . }}'],
  ['sns.default.subject', '{{ template "__subject" . }}'],
  ['sns.default.message', '{{ ctlSpacedDetails . }}'],
  ['telegram.default.message', '{{ ctlSpacedAlerts . }}'],
  ['discord.default.title', '{{ template "__subject" . }}'],
  ['discord.default.message', '{{ ctlSpacedAlerts . }}'],
  ['webex.default.message', '{{ ctlSpacedDetails . }}'],
  ['email.default.subject', '{{ template "__subject" . }}'],
  [
    'email.default.html',
    '{{ ctlEmailPage "head" . }}{{ template "__subject" . }}{{ ctlEmailPage "top" . }}{{ template "__alertmanagerURL" . }}{{ ctlEmailPage "button" . }}{{ template "__alertmanager" . }}{{ ctlEmailPage "alerts" . }}{{ template "__alertmanager" . }}{{ ctlEmailPage "end" . }}',
  ],
  ['msteams.default.title', '{{ template "__subject" . }}'],
  ['msteams.default.summary', '{{ template "__subject" . }}'],
  ['msteams.default.text', '{{ ctlTeamsText . }}'],
] as const;

/** Names whose text Alertmanager 0.25's own default.tmpl defines (the golden tests compare these; email.tmpl's page is compared on the SMTP wire). */
export const UPSTREAM_DEFAULT_NAMES: readonly string[] = DEFAULT_TEMPLATES.map(([n]) => n).filter((n) => !n.startsWith('email.') && !n.startsWith('msteams.'));

/** The default templates as one template source (each as a `define`). */
export function defaultTemplateSource(): string {
  return DEFAULT_TEMPLATES.map(([name, body]) => `{{ define "${name}" }}${body}{{ end }}`).join('');
}
