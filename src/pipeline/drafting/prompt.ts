/** The drafting prompt: style, reviewer feedback and the numbered research items; JSON answer only. */
import type { GatewayChatMessage } from '../../http/gateway-handle.js';
import type { StoredStyle } from '../data/style.js';
import type { RankedItem } from '../ranking.js';

export interface FeedbackExample {
  status: string;
  content: string;
  original_content: string | null;
  feedback: string | null;
}

export const MAX_THREAD_PARTS = 10;

export function draftingMessages(style: StoredStyle, items: RankedItem[], feedback: FeedbackExample[], maxLength: number): GatewayChatMessage[] {
  const lines: string[] = [
    'You write posts for X (Twitter) for one account, from research items the user gives you.',
    '',
    'Style:',
    `- Tone: ${style.tone || 'neutral'}`,
    `- Topics of interest: ${style.topics.length ? style.topics.join(', ') : 'any'}`,
    style.use_hashtags ? '- Hashtags: end every post with one to three relevant hashtags.' : '- Hashtags: never use hashtags.',
    style.thread_style
      ? `- Threads: when a topic needs more room, write a thread: the first post in "content", the follow-ups (at most ${MAX_THREAD_PARTS - 1}) in "thread".`
      : '- Threads: write single posts only; "thread" must be an empty array.',
    `- Every post and every thread part must be at most ${maxLength} characters; a link counts as 23 characters.`,
    '- Include the item link when it helps the reader.',
  ];
  if (feedback.length > 0) {
    lines.push('', 'Recent reviewer feedback on earlier drafts (learn from it):');
    for (const f of feedback) {
      if (f.original_content !== null && f.original_content !== f.content) {
        lines.push(`- Edited by the reviewer from ${quote(f.original_content)} to ${quote(f.content)}${f.feedback ? `; note: ${quote(f.feedback)}` : ''}`);
      } else if (f.status === 'rejected') {
        lines.push(`- Rejected: ${quote(f.content)}${f.feedback ? `; reason: ${quote(f.feedback)}` : ''}`);
      } else if (f.feedback) {
        lines.push(`- On ${quote(f.content)}: ${quote(f.feedback)}`);
      }
    }
  }
  lines.push(
    '',
    'Answer with one JSON object and nothing else, in this shape:',
    '{"posts": [{"item": 1, "content": "post text", "thread": []}]}',
    'Write exactly one post per numbered item; "item" is the item number.',
  );

  const user = ['Research items:'];
  items.forEach((it, i) => {
    const facts = [it.sourceName, it.score > 0 ? `${it.score} points` : '', it.comments > 0 ? `${it.comments} comments` : ''].filter(Boolean);
    user.push(`${i + 1}. ${it.category ? `[${it.category}] ` : ''}${it.title}${it.url ? ` — ${it.url}` : ''} (${facts.join(', ')})`);
    if (it.summary) user.push(`   ${it.summary.slice(0, 300)}`);
  });
  return [
    { role: 'system', content: lines.join('\n') },
    { role: 'user', content: user.join('\n') },
  ];
}

/** A follow-up asking the model to fix an answer that was not valid JSON. */
export function repairMessages(previous: GatewayChatMessage[], badAnswer: string): GatewayChatMessage[] {
  return [
    ...previous,
    { role: 'assistant', content: badAnswer.slice(0, 8000) },
    {
      role: 'user',
      content: 'That answer was not valid JSON. Reply again with only the JSON object {"posts": [...]} described above, no prose and no code fences.',
    },
  ];
}

function quote(s: string): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return JSON.stringify(one.length > 300 ? `${one.slice(0, 297)}...` : one);
}
