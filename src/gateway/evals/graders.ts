/**
 * Eval graders: whether a model's answer passes a case. `exact`, `contains` and `regex` (RE2: linear
 * time, so a suite cannot stall the daemon with a pathological pattern) compare text; `json-schema`
 * parses the answer (a ```json fence is allowed) and validates it; `llm-judge` asks a judge model,
 * through the gateway's own routing, whether the answer meets the criteria.
 */
import { RE2JS } from 're2js';
import { ajv } from '../../http/schema.js';

export type Grader =
  | { type: 'exact'; caseInsensitive?: boolean }
  | { type: 'contains'; caseInsensitive?: boolean }
  | { type: 'regex'; pattern?: string; caseInsensitive?: boolean }
  | { type: 'json-schema'; schema?: Record<string, unknown> }
  | { type: 'llm-judge'; criteria?: string };

export const GRADER_TYPES = ['exact', 'contains', 'regex', 'json-schema', 'llm-judge'] as const;

export interface Grade {
  passed: boolean;
  /** 0..1 (the judge may give partial credit). */
  score: number;
  reason: string;
}

/** Asks the judge model and answers its text. */
export type Judge = (prompt: string) => Promise<string>;

const norm = (s: string, ci?: boolean) => (ci ? s.trim().toLowerCase() : s.trim());

/** Check a grader's own settings when the suite is saved (a bad regex or schema is a 400 then, not a failed run). */
export function checkGrader(g: Grader, expected: string | undefined, where: string): string | undefined {
  if ((g.type === 'exact' || g.type === 'contains') && expected === undefined) return `${where}: grader ${g.type} needs expected`;
  if (g.type === 'regex') {
    const pattern = g.pattern ?? expected;
    if (pattern === undefined) return `${where}: grader regex needs pattern (or expected)`;
    try {
      RE2JS.compile(pattern);
    } catch (e) {
      return `${where}: regex ${JSON.stringify(pattern)} does not compile: ${(e as Error).message}`;
    }
  }
  if (g.type === 'json-schema') {
    if (!g.schema) return `${where}: grader json-schema needs schema`;
    try {
      ajv().compile(g.schema);
    } catch (e) {
      return `${where}: schema does not compile: ${(e as Error).message}`;
    }
  }
  if (g.type === 'llm-judge' && !g.criteria && expected === undefined) return `${where}: grader llm-judge needs criteria (or expected)`;
  return undefined;
}

function jsonOf(text: string): unknown {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(text);
  return JSON.parse((fenced ? fenced[1]! : text).trim());
}

/** The judge's verdict: `PASS`/`FAIL` first, or a score `n/10`. */
export function parseVerdict(text: string): Grade {
  const t = text.trim();
  const score = /(?:^|\b)(\d+(?:\.\d+)?)\s*\/\s*10\b/.exec(t);
  if (/^\W*pass\b/i.test(t)) return { passed: true, score: 1, reason: `judge: ${t.slice(0, 200)}` };
  if (/^\W*fail\b/i.test(t)) return { passed: false, score: 0, reason: `judge: ${t.slice(0, 200)}` };
  if (score) {
    const s = Math.min(1, Number(score[1]) / 10);
    return { passed: s >= 0.7, score: s, reason: `judge: ${t.slice(0, 200)}` };
  }
  return { passed: false, score: 0, reason: `the judge answered neither PASS, FAIL nor a score out of 10: ${t.slice(0, 200)}` };
}

export async function grade(g: Grader, output: string, expected: string | undefined, input: string, judge: Judge | undefined): Promise<Grade> {
  switch (g.type) {
    case 'exact': {
      const ok = norm(output, g.caseInsensitive) === norm(expected ?? '', g.caseInsensitive);
      return { passed: ok, score: ok ? 1 : 0, reason: ok ? 'exact match' : 'differs from the expected answer' };
    }
    case 'contains': {
      const ok = norm(output, g.caseInsensitive).includes(norm(expected ?? '', g.caseInsensitive));
      return { passed: ok, score: ok ? 1 : 0, reason: ok ? 'contains the expected text' : 'does not contain the expected text' };
    }
    case 'regex': {
      const re = RE2JS.compile(g.pattern ?? expected ?? '', g.caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
      const ok = re.matcher(output).find();
      return { passed: ok, score: ok ? 1 : 0, reason: ok ? 'matches the pattern' : 'does not match the pattern' };
    }
    case 'json-schema': {
      let value: unknown;
      try {
        value = jsonOf(output);
      } catch {
        return { passed: false, score: 0, reason: 'the answer is not JSON' };
      }
      const validate = ajv().compile(g.schema ?? {});
      const ok = validate(value) as boolean;
      return { passed: ok, score: ok ? 1 : 0, reason: ok ? 'valid against the schema' : `schema: ${validate.errors?.[0]?.instancePath || '/'} ${validate.errors?.[0]?.message ?? 'invalid'}` };
    }
    case 'llm-judge': {
      if (!judge) return { passed: false, score: 0, reason: 'no judgeModel was given for an llm-judge case' };
      const prompt = [
        'You grade an AI answer. Reply with PASS or FAIL on the first line, then one sentence why.',
        `Question:\n${input}`,
        ...(expected !== undefined ? [`Reference answer:\n${expected}`] : []),
        ...(g.criteria ? [`Criteria:\n${g.criteria}`] : []),
        `Answer to grade:\n${output}`,
      ].join('\n\n');
      return parseVerdict(await judge(prompt));
    }
  }
}
