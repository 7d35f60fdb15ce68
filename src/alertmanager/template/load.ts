/**
 * The template files of an alertmanager.yml (`templates:`, globs already made absolute by the
 * config loader), parsed when the configuration loads, as 0.25 does (template.FromGlobs): a file
 * that does not parse fails the load (start-up: the component stays down; reload: 500 and the old
 * configuration stays). Each file is a template named by its base name.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, isAbsolute, join, sep } from 'node:path';
import { Templates } from '../../gotemplate/index.js';
import { ALERTMANAGER_FUNCS } from './data.js';
import { DEFAULT_TEXT_FUNCS, defaultTemplateSource } from './defaults.js';

const GLOB_CHARS = /[*?[]/;

/** filepath.Match as a regular expression for one path component. */
function componentRegex(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 1);
      if (end === -1) throw new Error(`syntax error in pattern ${pattern}`);
      const body = pattern.slice(i + 1, end).replace(/^\^/, '!');
      re += '[' + (body.startsWith('!') ? '^' + body.slice(1) : body).replace(/\\/g, '\\\\') + ']';
      i = end;
    } else if (c === '\\' && i + 1 < pattern.length) re += '\\' + pattern[++i];
    else re += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/** filepath.Glob: the files matching `pattern`, sorted; [] when none (not an error). */
export function expandGlob(pattern: string): string[] {
  if (!GLOB_CHARS.test(pattern)) {
    try {
      readFileSync(pattern);
      return [pattern];
    } catch {
      return [];
    }
  }
  const parts = pattern.split(sep);
  let paths = [isAbsolute(pattern) ? sep : '.'];
  for (const part of parts) {
    if (part === '') continue;
    const next: string[] = [];
    for (const base of paths) {
      if (!GLOB_CHARS.test(part)) {
        next.push(join(base, part));
        continue;
      }
      const re = componentRegex(part);
      let names: string[] = [];
      try {
        names = readdirSync(base);
      } catch {
        continue;
      }
      for (const n of names.sort()) if (re.test(n)) next.push(join(base, n));
    }
    paths = next;
  }
  return paths;
}

/** ctl's default templates alone (what a configuration without `templates:` renders with). */
export function defaultTemplates(): Templates {
  return new Templates({ ...ALERTMANAGER_FUNCS, ...DEFAULT_TEXT_FUNCS }).parse('default.tmpl', defaultTemplateSource());
}

/**
 * The default templates, then every file the globs name (a file may redefine a default, as in
 * 0.25); throws the first parse error (Go's text: `template: a.tmpl:3: ...`).
 */
export function loadTemplateFiles(globs: readonly string[]): Templates {
  const t = defaultTemplates();
  for (const g of globs) {
    for (const file of expandGlob(g)) {
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch (e) {
        throw new Error(`open ${file}: ${(e as NodeJS.ErrnoException).code === 'EISDIR' ? 'is a directory' : (e as Error).message}`);
      }
      t.parse(basename(file), text);
    }
  }
  return t;
}
