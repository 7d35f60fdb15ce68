/**
 * The text of label matchers in pkg/labels syntax (0.25), shared by the server (matchers.ts) and
 * the web console (src/console/alertmanager/matchers.ts), which compile the values differently
 * (RE2 on the server, RegExp in the browser). Pure string work: no imports.
 */

// name, operator ('=~' before '='), then the rest; whitespace (Go's \s) around tokens is dropped.
export const MATCHER_RE = /^[\t\n\f\r ]*([a-zA-Z_:][a-zA-Z0-9_:]*)[\t\n\f\r ]*(=~|=|!=|!~)[\t\n\f\r ]*([\s\S]*?)[\t\n\f\r ]*$/;

/**
 * A matcher's value as written (`raw0`, after the operator), optionally double-quoted with `\"`,
 * `\\` and `\n` escapes; `fail` makes the error for a stray double quote.
 */
export function unquoteMatcherValue(raw0: string, fail: (message: string) => Error): string {
  let raw = raw0;
  let expectTrailingQuote = false;
  if (raw.startsWith('"')) {
    raw = raw.slice(1);
    expectTrailingQuote = true;
  }
  let value = '';
  let escaped = false;
  const chars = Array.from(raw);
  for (let i = 0; i < chars.length; i++) {
    const r = chars[i]!;
    if (escaped) {
      escaped = false;
      if (r === 'n') value += '\n';
      else if (r === '"' || r === '\\') value += r;
      else value += '\\' + r; // a spurious escape keeps its backslash
      continue;
    }
    if (r === '\\') {
      if (i < chars.length - 1) {
        escaped = true;
        continue;
      }
      value += '\\';
    } else if (r === '"') {
      if (!expectTrailingQuote || i < chars.length - 1) throw fail(`matcher value contains unescaped double quote: ${raw0}`);
      expectTrailingQuote = false;
    } else {
      value += r;
    }
  }
  if (expectTrailingQuote) throw fail(`matcher value contains unescaped double quote: ${raw0}`);
  return value;
}

/**
 * A comma-separated list (pkg/labels.ParseMatchers) cut into one text per matcher: optional braces,
 * commas inside double quotes do not split, a blank last one is dropped.
 */
export function splitMatcherList(s: string): string[] {
  if (s.startsWith('{')) s = s.slice(1);
  if (s.endsWith('}')) s = s.slice(0, -1);
  const tokens: string[] = [];
  let insideQuotes = false;
  let escaped = false;
  let token = '';
  for (const r of s) {
    if (r === ',' && !insideQuotes) {
      tokens.push(token);
      token = '';
      continue;
    }
    if (r === '"') {
      if (!escaped) insideQuotes = !insideQuotes;
      else escaped = false;
    } else if (r === '\\') {
      escaped = !escaped;
    } else {
      escaped = false;
    }
    token += r;
  }
  const last = token.trim();
  if (last !== '') tokens.push(last);
  return tokens;
}
