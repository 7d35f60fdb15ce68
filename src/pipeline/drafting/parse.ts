/**
 * Turn a model answer into posts, repairing what can be repaired (code fences, prose around the
 * JSON, stray hashtags, whitespace, a long single post split into a thread when threads are wanted)
 * and rejecting the rest one post at a time. Never throws on model output.
 */
import { splitIntoParts, weightedLength } from './length.js';
import { MAX_THREAD_PARTS } from './prompt.js';

export interface DraftRules {
  maxLength: number;
  useHashtags: boolean;
  threads: boolean;
}

export interface DraftedPost {
  /** 0-based index of the research item the post is about. */
  item: number;
  content: string;
  thread: string[];
  /** What was repaired, for the run report. */
  repairs: string[];
}

export interface RejectedDraft {
  /** Position of the entry in the model's answer (0-based); -1 for the whole answer. */
  index: number;
  item: number | null;
  reason: string;
}

export interface ParsedDrafts {
  posts: DraftedPost[];
  rejected: RejectedDraft[];
  /** False when no JSON could be found in the answer at all. */
  json: boolean;
}

/** Find a JSON value in a model answer: the whole text, a fenced block, or the outermost {...} / [...]. */
export function extractJson(text: string): unknown {
  const attempts: string[] = [text.trim()];
  const fence = /```(?:json|JSON)?\s*\n?([\s\S]*?)```/.exec(text);
  if (fence) attempts.push(fence[1]!.trim());
  for (const [open, close] of [
    ['{', '}'],
    ['[', ']'],
  ] as const) {
    const a = text.indexOf(open);
    const b = text.lastIndexOf(close);
    if (a >= 0 && b > a) attempts.push(text.slice(a, b + 1));
  }
  for (const t of attempts) {
    try {
      return JSON.parse(t);
    } catch {
      /* next */
    }
  }
  return undefined;
}

export function parseDrafts(answer: string, itemCount: number, rules: DraftRules): ParsedDrafts {
  const doc = extractJson(answer);
  const entries = entriesOf(doc);
  if (!entries) {
    return {
      posts: [],
      rejected: [{ index: -1, item: null, reason: doc === undefined ? 'model answer is not valid JSON' : 'model answer has no "posts" array' }],
      json: doc !== undefined,
    };
  }
  const posts: DraftedPost[] = [];
  const rejected: RejectedDraft[] = [];
  const taken = new Set<number>();
  entries.forEach((entry, index) => {
    const r = repairEntry(entry, index, itemCount, rules);
    if ('reason' in r) {
      rejected.push(r);
      return;
    }
    if (taken.has(r.item)) {
      rejected.push({ index, item: r.item, reason: `a second post for item ${r.item + 1}` });
      return;
    }
    taken.add(r.item);
    posts.push(r);
  });
  return { posts, rejected, json: true };
}

function entriesOf(doc: unknown): unknown[] | null {
  if (Array.isArray(doc)) return doc;
  if (doc && typeof doc === 'object') {
    const o = doc as Record<string, unknown>;
    for (const k of ['posts', 'drafts', 'items', 'tweets']) if (Array.isArray(o[k])) return o[k] as unknown[];
    if (typeof o.content === 'string') return [o];
  }
  return null;
}

function repairEntry(entry: unknown, index: number, itemCount: number, rules: DraftRules): DraftedPost | RejectedDraft {
  const repairs: string[] = [];
  let content: unknown;
  let thread: unknown = [];
  let itemRef: unknown;
  if (typeof entry === 'string') {
    content = entry;
  } else if (entry && typeof entry === 'object' && !Array.isArray(entry)) {
    const o = entry as Record<string, unknown>;
    content = o.content ?? o.text ?? o.post ?? o.tweet;
    thread = o.thread ?? o.parts ?? [];
    itemRef = o.item ?? o.item_number ?? o.index;
  } else {
    return { index, item: null, reason: 'entry is neither an object nor a string' };
  }

  // Which research item: the model's number (1-based) when sane, else the entry's position.
  let item = index;
  const n = typeof itemRef === 'string' ? Number(itemRef) : itemRef;
  if (typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= itemCount) item = n - 1;
  else if (itemRef !== undefined) repairs.push('item number out of range; matched by position');
  if (item >= itemCount) return { index, item: null, reason: 'entry refers to no research item' };

  if (!Array.isArray(thread)) thread = typeof thread === 'string' && thread.trim() ? [thread] : [];
  let parts = (thread as unknown[]).filter((p): p is string => typeof p === 'string');
  if (typeof content !== 'string' || content.trim() === '') {
    if (parts.length === 0) return { index, item, reason: 'post has no text' };
    content = parts[0];
    parts = parts.slice(1);
    repairs.push('content taken from the first thread part');
  }

  let all = [content as string, ...parts].map((p) => tidy(p, rules, repairs)).filter((p) => p !== '');
  if (all.length === 0) return { index, item, reason: 'post is empty after cleaning' };

  if (!rules.threads && all.length > 1) {
    all = [all.join(' ')];
    repairs.push('thread joined into one post (threads are off)');
  }
  const fitted: string[] = [];
  for (const part of all) {
    const len = weightedLength(part);
    if (len <= rules.maxLength) {
      fitted.push(part);
      continue;
    }
    if (!rules.threads) return { index, item, reason: `post is too long (${len} > ${rules.maxLength} characters)` };
    const split = splitIntoParts(part, rules.maxLength);
    if (!split) return { index, item, reason: `a word or link is longer than ${rules.maxLength} characters` };
    fitted.push(...split);
    repairs.push('long text split into a thread');
  }
  if (fitted.length > MAX_THREAD_PARTS) return { index, item, reason: `thread has ${fitted.length} parts (at most ${MAX_THREAD_PARTS})` };
  return { item, content: fitted[0]!, thread: fitted.slice(1), repairs };
}

const HASHTAG = /(^|\s)#[\p{L}\p{N}_]+/gu;

function tidy(text: string, rules: DraftRules, repairs: string[]): string {
  let t = text.replace(/\r\n?/g, '\n');
  // Outer quotes the model sometimes adds around the whole post.
  const q = /^\s*["“](.*)["”]\s*$/s.exec(t);
  if (q) t = q[1]!;
  t = t
    .split('\n')
    .map((l) => l.replace(/[ \t]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  if (!rules.useHashtags && HASHTAG.test(t)) {
    HASHTAG.lastIndex = 0;
    t = t.replace(HASHTAG, '$1').replace(/[ \t]{2,}/g, ' ').trim();
    repairs.push('hashtags removed (policy never)');
  }
  HASHTAG.lastIndex = 0;
  return t;
}
