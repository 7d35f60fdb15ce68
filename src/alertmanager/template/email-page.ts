/**
 * The default HTML e-mail (`email.default.html`) as 0.25 renders it: the page of its email.tmpl
 * (styles and layout derived from Mailgun's transactional e-mail templates, MIT licence, Copyright
 * (c) 2014 Mailgun), after html/template has removed its comment and escaped every value for its
 * context. The page's own text is written here in pieces; the named templates it calls
 * (`__subject`, `__alertmanagerURL`, `__alertmanager`) stay template calls in the definition
 * (defaults.ts), so a file redefining them changes the page as it does in 0.25:
 *
 *   head, {{ template "__subject" . }}, top, {{ template "__alertmanagerURL" . }}, button,
 *   {{ template "__alertmanager" . }}, alerts, {{ template "__alertmanager" . }}, end
 *
 * Values are escaped as html/template escapes them where the page places them: in text as
 * htmlEscaper does (`& ' < > " +` and NUL), in `href` as a URL (a scheme other than http, https or
 * mailto becomes `#ZgotmplZ`, bytes outside URL syntax are %-encoded, then attribute-escaped).
 */
import { GO_FORMAT, SAFE_HTML, attrEscaper, htmlEscaper, urlFilter, urlNormalizer } from '../../gotemplate/index.js';

interface Pair {
  Name: string;
  Value: string;
}
interface KV {
  SortedPairs(): Pair[];
}
interface PageAlert {
  Labels: KV;
  Annotations: KV;
  GeneratorURL: string;
}
interface PageData {
  Alerts: PageAlert[] & { Firing(): PageAlert[]; Resolved(): PageAlert[] };
  GroupLabels: KV;
  ExternalURL: string;
}

/** html/template's htmlEscaper (text and quoted attributes). */
export function goHtmlEscape(s: string): string {
  return htmlEscaper(s);
}

/** html/template's URL attribute escaping: urlFilter, urlNormalizer, then attrEscaper. */
export function goHrefEscape(s: string): string {
  return attrEscaper(urlNormalizer(urlFilter(s)));
}

const BASE = "margin: 0; font-family: 'Helvetica Neue', Helvetica, Arial, sans-serif; box-sizing: border-box; font-size: 14px;";
const FONT = "font-family: 'Helvetica Neue', Helvetica, Arial, sans-serif; box-sizing: border-box;";

const HEAD = `

<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml" style="${BASE}">
<head>
<meta name="viewport" content="width=device-width">
<meta http-equiv="Content-Type" content="text/html; charset=UTF-8">
<title>`;
const TOP = `</title>
<style>
@media only screen and (max-width: 640px) {
  body {
    padding: 0 !important;
  }

  h1,
h2,
h3,
h4 {
    font-weight: 800 !important;
    margin: 20px 0 5px !important;
  }

  h1 {
    font-size: 22px !important;
  }

  h2 {
    font-size: 18px !important;
  }

  h3 {
    font-size: 16px !important;
  }

  .container {
    padding: 0 !important;
    width: 100% !important;
  }

  .content {
    padding: 0 !important;
  }

  .content-wrap {
    padding: 10px !important;
  }

  .invoice {
    width: 100% !important;
  }
}
</style>
</head>

<body itemscope itemtype="http://schema.org/EmailMessage" style="${BASE} -webkit-font-smoothing: antialiased; -webkit-text-size-adjust: none; height: 100%; line-height: 1.6em; background-color: #f6f6f6; width: 100%;">

<table class="body-wrap" style="${BASE} background-color: #f6f6f6; width: 100%;" width="100%" bgcolor="#f6f6f6">
  <tr style="${BASE}">
    <td style="${BASE} vertical-align: top;" valign="top"></td>
    <td class="container" width="600" style="${FONT} font-size: 14px; vertical-align: top; display: block; max-width: 600px; margin: 0 auto; clear: both;" valign="top">
      <div class="content" style="${FONT} font-size: 14px; max-width: 600px; margin: 0 auto; display: block; padding: 20px;">
        <table class="main" width="100%" cellpadding="0" cellspacing="0" style="${BASE} background-color: #fff; border: 1px solid #e9e9e9; border-radius: 3px;" bgcolor="#fff">
          <tr style="${BASE}">
            `;
const FIRING_TD = `
            <td class="alert alert-warning" style="margin: 0; ${FONT} vertical-align: top; font-size: 16px; color: #fff; font-weight: 500; padding: 20px; text-align: center; border-radius: 3px 3px 0 0; background-color: #E6522C;" valign="top" align="center" bgcolor="#E6522C">
              `;
const TD_END = `
            </td>
            `;
const RESOLVED_TD = `
            <td class="alert alert-good" style="margin: 0; ${FONT} vertical-align: top; font-size: 16px; color: #fff; font-weight: 500; padding: 20px; text-align: center; border-radius: 3px 3px 0 0; background-color: #68B90F;" valign="top" align="center" bgcolor="#68B90F">
              `;
const BUTTON_OPEN = `
          </tr>
          <tr style="${BASE}">
            <td class="content-wrap" style="${BASE} vertical-align: top; padding: 30px;" valign="top">
              <table width="100%" cellpadding="0" cellspacing="0" style="${BASE}">
                <tr style="${BASE}">
                  <td class="content-block" style="${BASE} vertical-align: top; padding: 0 0 20px;" valign="top">
                    <a href="`;
const BUTTON_STYLE = `" class="btn-primary" style="${BASE} text-decoration: none; color: #FFF; background-color: #348eda; border: solid #348eda; border-width: 10px 20px; line-height: 2em; font-weight: bold; text-align: center; cursor: pointer; display: inline-block; border-radius: 5px; text-transform: capitalize;">View in `;
const AFTER_BUTTON = `</a>
                  </td>
                </tr>
                `;
const FIRING_COUNT_OPEN = `
                <tr style="${BASE}">
                  <td class="content-block" style="${BASE} vertical-align: top; padding: 0 0 20px;" valign="top">
                    <strong style="${BASE}">[`;
const FIRING_COUNT_CLOSE = `] Firing</strong>
                  </td>
                </tr>
                `;
const NL16 = `
                `;
const ALERT_OPEN = `
                <tr style="${BASE}">
                  <td class="content-block" style="${BASE} vertical-align: top; padding: 0 0 20px;" valign="top">
                    <strong style="${BASE}">Labels</strong><br style="${BASE}">
                    `;
const BR = `<br style="${BASE}">`;
const NL20 = `
                    `;
const ANNOTATIONS_HEAD = `<strong style="${BASE}">Annotations</strong><br style="${BASE}">`;
const SOURCE_OPEN = `
                    <a href="`;
const SOURCE_CLOSE = `" style="${BASE} color: #348eda; text-decoration: underline;">Source</a><br style="${BASE}">
                  </td>
                </tr>
                `;
const BEFORE_RESOLVED = `

                `;
const NL18 = `
                  `;
const SEPARATOR = `
                <tr style="${BASE}">
                  <td class="content-block" style="${BASE} vertical-align: top; padding: 0 0 20px;" valign="top">
                    <br style="${BASE}">
                    <hr style="${BASE}">
                    <br style="${BASE}">
                  </td>
                </tr>
                  `;
const RESOLVED_COUNT_OPEN = `
                <tr style="${BASE}">
                  <td class="content-block" style="${BASE} vertical-align: top; padding: 0 0 20px;" valign="top">
                    <strong style="${BASE}">[`;
const RESOLVED_COUNT_CLOSE = `] Resolved</strong>
                  </td>
                </tr>
                `;
const FOOTER_OPEN = `
              </table>
            </td>
          </tr>
        </table>

        <div class="footer" style="${BASE} width: 100%; clear: both; color: #999; padding: 20px;">
          <table width="100%" style="${BASE}">
            <tr style="${BASE}">
              <td class="aligncenter content-block" style="margin: 0; ${FONT} vertical-align: top; padding: 0 0 20px; text-align: center; color: #999; font-size: 12px;" valign="top" align="center"><a href="`;
const FOOTER_LINK = `" style="margin: 0; ${FONT} text-decoration: underline; color: #999; font-size: 12px;">Sent by `;
const END = `</a></td>
            </tr>
          </table>
        </div></div>
    </td>
    <td style="${BASE} vertical-align: top;" valign="top"></td>
  </tr>
</table>

</body>
</html>

`;

/** The header cell: how many alerts, for which group labels (resolved: a blank after each value). */
function headerCell(d: PageData): string {
  const firing = d.Alerts.Firing().length > 0;
  let out = firing ? FIRING_TD : RESOLVED_TD;
  out += `${d.Alerts.length} alert${d.Alerts.length > 1 ? 's' : ''} for `;
  for (const p of d.GroupLabels.SortedPairs()) out += `\n                ${goHtmlEscape(p.Name)}=${goHtmlEscape(p.Value)}${firing ? '' : ' '}\n              `;
  return out + TD_END;
}

/** One alert's row: labels, annotations (with their heading when there are any), the source link. */
function alertRow(a: PageAlert): string {
  const pairs = (kv: KV) => kv.SortedPairs().map((p) => `${goHtmlEscape(p.Name)} = ${goHtmlEscape(p.Value)}${BR}`).join('');
  const annotations = a.Annotations.SortedPairs();
  return `${ALERT_OPEN}${pairs(a.Labels)}${NL20}${annotations.length > 0 ? ANNOTATIONS_HEAD : ''}${NL20}${pairs(a.Annotations)}${SOURCE_OPEN}${goHrefEscape(a.GeneratorURL)}${SOURCE_CLOSE}`;
}

function alertsPart(d: PageData): string {
  const firing = d.Alerts.Firing();
  const resolved = d.Alerts.Resolved();
  let out = AFTER_BUTTON;
  if (firing.length > 0) out += `${FIRING_COUNT_OPEN}${firing.length}${FIRING_COUNT_CLOSE}`;
  out += NL16 + firing.map(alertRow).join('') + BEFORE_RESOLVED;
  if (resolved.length > 0) out += `${NL18}${firing.length > 0 ? SEPARATOR : ''}${RESOLVED_COUNT_OPEN}${resolved.length}${RESOLVED_COUNT_CLOSE}`;
  out += NL16 + resolved.map(alertRow).join('');
  return out + FOOTER_OPEN + goHrefEscape(d.ExternalURL) + FOOTER_LINK;
}

const PARTS: Record<string, (d: PageData) => string> = {
  head: () => HEAD,
  top: (d) => TOP + headerCell(d) + BUTTON_OPEN,
  button: () => BUTTON_STYLE,
  alerts: alertsPart,
  end: () => END,
};

/** One piece of the page, as HTML the template prints as it is. */
export function emailPagePart(part: unknown, data: unknown): unknown {
  const render = PARTS[String(part)];
  if (!render) throw new Error(`ctlEmailPage: no part ${JSON.stringify(part)}`);
  const html = render(data as PageData);
  return { [GO_FORMAT]: () => html, [SAFE_HTML]: true, toString: () => html };
}
