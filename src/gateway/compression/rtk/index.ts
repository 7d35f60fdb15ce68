/**
 * RTK: command output in tool results, classified and filtered by the JSON filter packs shipped in
 * filters.json. A filter matches by the command (when the tool call named one) or by patterns in
 * the first lines; its stages run in order: strip ANSI codes → regex replacements → a summary
 * shortcut (skipped when an error shows) → drop lines → collapse repeated lines → cut long lines →
 * head and tail. Lines matching a `preserve` pattern (errors, summaries) are never dropped. The
 * configured caps (lines, characters) apply last.
 */
import pack from './filters.json' with { type: 'json' };

interface StageSpec {
  stripAnsi?: boolean;
  replace?: { pattern: string; with: string }[];
  dropLines?: string[];
  collapseRepeats?: number;
  maxLineLength?: number;
  head?: number;
  tail?: number;
  maxLines?: number;
}

interface FilterSpec {
  id: string;
  description: string;
  priority: number;
  match: { command?: string; content?: string[] };
  preserve?: string[];
  summary?: { when: string; unless?: string };
  stages: StageSpec;
}

interface Filter {
  spec: FilterSpec;
  command?: RegExp;
  content: RegExp[];
  preserve: RegExp[];
  drop: RegExp[];
  replace: { re: RegExp; with: string }[];
  summary?: { when: RegExp; unless?: RegExp };
}

export interface RtkLimits {
  maxLines: number;
  maxChars: number;
  collapseRepeats: number;
}

export const DEFAULT_RTK: RtkLimits = { maxLines: 120, maxChars: 12_000, collapseRepeats: 3 };

const FILTERS: Filter[] = (pack.filters as FilterSpec[])
  .map((spec) => ({
    spec,
    ...(spec.match.command ? { command: new RegExp(spec.match.command, 'i') } : {}),
    content: (spec.match.content ?? []).map((p) => new RegExp(p, 'm')),
    preserve: (spec.preserve ?? []).map((p) => new RegExp(p)),
    drop: (spec.stages.dropLines ?? []).map((p) => new RegExp(p)),
    replace: (spec.stages.replace ?? []).map((x) => ({ re: new RegExp(x.pattern), with: x.with })),
    ...(spec.summary ? { summary: { when: new RegExp(spec.summary.when, 'm'), ...(spec.summary.unless ? { unless: new RegExp(spec.summary.unless, 'm') } : {}) } } : {}),
  }))
  .sort((a, b) => b.spec.priority - a.spec.priority);

export function rtkFilters(): FilterSpec[] {
  return FILTERS.map((f) => f.spec);
}

const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b\][^\u0007]*\u0007/g;

/** The filter for an output: by command first, then by content in its first 200 lines, else generic. */
export function classify(output: string, command?: string): Filter {
  if (command) {
    const byCommand = FILTERS.find((f) => f.command?.test(command.trim()));
    if (byCommand) return byCommand;
  }
  const head = output.length > 20_000 ? output.slice(0, 20_000) : output;
  return FILTERS.find((f) => f.content.length > 0 && f.content.some((re) => re.test(head))) ?? FILTERS.find((f) => f.spec.id === 'generic')!;
}

export interface RtkResult {
  text: string;
  filter: string;
  linesBefore: number;
  linesAfter: number;
}

function collapse(lines: string[], max: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < lines.length; ) {
    let j = i;
    while (j + 1 < lines.length && lines[j + 1] === lines[i]) j++;
    const run = j - i + 1;
    if (run > max) {
      for (let k = 0; k < max; k++) out.push(lines[i]!);
      out.push(`… (the line above repeats ${run - max} more times)`);
    } else for (let k = i; k <= j; k++) out.push(lines[k]!);
    i = j + 1;
  }
  return out;
}

/** Keep the first `head` and last `tail` lines, and preserved lines in between; say how many went. */
function headTail(lines: string[], head: number, tail: number, keep: (l: string) => boolean): string[] {
  if (lines.length <= head + tail) return lines;
  const middle = lines.slice(head, lines.length - tail);
  const kept = middle.filter(keep);
  const dropped = middle.length - kept.length;
  return [...lines.slice(0, head), ...(dropped > 0 ? [`[… ${dropped} lines omitted …]`] : []), ...kept, ...lines.slice(lines.length - tail)];
}

export function rtk(output: string, limits: RtkLimits, command?: string): RtkResult {
  const f = classify(output, command);
  const s = f.spec.stages;
  let text = s.stripAnsi !== false ? output.replace(ANSI, '') : output;
  let lines = text.split(/\r?\n/);
  const before = lines.length;
  const keep = (l: string) => f.preserve.some((re) => re.test(l));
  if (f.replace.length) lines = lines.map((l) => f.replace.reduce((acc, x) => acc.replace(x.re, x.with), l));
  if (f.summary && f.summary.when.test(text) && !(f.summary.unless && f.summary.unless.test(text))) {
    lines = lines.filter((l) => f.summary!.when.test(l));
  } else {
    if (f.drop.length) lines = lines.filter((l) => keep(l) || !f.drop.some((re) => re.test(l)));
    lines = collapse(lines, s.collapseRepeats ?? limits.collapseRepeats);
    if (s.maxLineLength) lines = lines.map((l) => (l.length > s.maxLineLength! ? `${l.slice(0, s.maxLineLength)}…` : l));
    if (s.head !== undefined || s.tail !== undefined) lines = headTail(lines, s.head ?? 0, s.tail ?? 0, keep);
    else if (s.maxLines !== undefined) lines = headTail(lines, Math.ceil(s.maxLines * 0.75), Math.floor(s.maxLines * 0.25), keep);
  }
  // The configured caps, last: lines, then characters.
  if (lines.length > limits.maxLines) lines = headTail(lines, Math.ceil(limits.maxLines * 0.75), Math.floor(limits.maxLines * 0.25), () => false);
  text = lines.join('\n').trim();
  if (text.length > limits.maxChars) text = `${text.slice(0, Math.floor(limits.maxChars * 0.75))}\n[… ${text.length - limits.maxChars} characters omitted …]\n${text.slice(text.length - Math.floor(limits.maxChars * 0.25))}`;
  if (!text) text = '(no output)';
  return { text, filter: f.spec.id, linesBefore: before, linesAfter: text.split('\n').length };
}
