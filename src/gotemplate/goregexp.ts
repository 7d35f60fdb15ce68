/**
 * Go's regexp.ReplaceAllString on RE2 (re2js): matches found as Go finds them (an empty match
 * right after a previous match is skipped), and the replacement expanded as regexp.Expand does:
 * `$1`, `${1}`, `$name`, `${name}`, `$$`; a name is the longest run of letters, digits and '_'
 * (`$1W` names group "1W"), and a group that does not exist expands to nothing.
 */
import { RE2JS } from 're2js';

function expand(template: string, m: { group(i: number | string): string | null }, names: Record<string, number>, groups: number): string {
  let out = '';
  let i = 0;
  while (i < template.length) {
    const d = template.indexOf('$', i);
    if (d === -1) {
      out += template.slice(i);
      break;
    }
    out += template.slice(i, d);
    if (template[d + 1] === '$') {
      out += '$';
      i = d + 2;
      continue;
    }
    let name: string | undefined;
    let end = d + 1;
    if (template[d + 1] === '{') {
      const close = template.indexOf('}', d + 2);
      const inner = close === -1 ? '' : template.slice(d + 2, close);
      if (/^\w+$/.test(inner)) {
        name = inner;
        end = close + 1;
      }
    } else {
      const run = /^\w+/.exec(template.slice(d + 1));
      if (run) {
        name = run[0];
        end = d + 1 + run[0].length;
      }
    }
    if (name === undefined) {
      // Not a reference: the '$' stays as written.
      out += '$';
      i = d + 1;
      continue;
    }
    const index = /^\d+$/.test(name) ? Number(name) : names[name];
    if (index !== undefined && index <= groups) out += m.group(index) ?? '';
    i = end;
  }
  return out;
}

export function goReplaceAll(pattern: string, src: string, template: string): string {
  const re = RE2JS.compile(pattern);
  const names = re.namedGroups() as Record<string, number>;
  const groups = re.groupCount();
  const m = re.matcher(src);
  let out = '';
  let last = 0;
  let pos = 0;
  let prevEnd = -1;
  while (pos <= src.length && m.find(pos)) {
    const start = m.start();
    const end = m.end();
    let accept = true;
    if (end === pos && start === end) {
      // An empty match: not right after the previous one; move on one character.
      if (start === prevEnd) accept = false;
      pos += start < src.length ? String.fromCodePoint(src.codePointAt(start)!).length : 1;
    } else pos = end;
    prevEnd = end;
    if (!accept) continue;
    out += src.slice(last, start) + expand(template, m, names, groups);
    last = end;
  }
  return out + src.slice(last);
}
