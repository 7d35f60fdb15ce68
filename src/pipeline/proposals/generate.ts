/**
 * Improvement proposals: the model reads the best and worst published posts (by engagement rate),
 * recent reviewer feedback and the current style, and proposes style changes. Each proposal is
 * checked field by field; invalid or no-op changes are dropped, never stored.
 */
import type { GatewayChatMessage, GatewayHandle } from '../../http/gateway-handle.js';
import { conflict } from '../../http/errors.js';
import type { Repos } from '../data/repos.js';
import type { ActivityRepo } from '../data/activity.js';
import type { Post, PostsRepo } from '../data/posts.js';
import type { NewProposal, Proposal, ProposalsRepo } from '../data/proposals.js';
import { flattenStyle, type StylePatch, type StyleRepo } from '../data/style.js';
import { extractJson } from '../drafting/parse.js';
import { chatFailure } from '../gateway-access.js';

export const MAX_PROPOSALS = 5;
const SAMPLE = 5;

export interface GenerateDeps {
  tx<T>(fn: (r: Repos) => Promise<T>): Promise<T>;
  posts: PostsRepo;
  style: StyleRepo;
  proposals: ProposalsRepo;
  activity: ActivityRepo;
  timeoutMs: number;
}

export interface GenerateResult {
  proposals: Proposal[];
  dropped: { index: number; reason: string }[];
}

export async function generateProposals(gateway: GatewayHandle, model: string, d: GenerateDeps): Promise<GenerateResult> {
  const best = await d.posts.rankedByEngagement('best', SAMPLE);
  const worst = (await d.posts.rankedByEngagement('worst', SAMPLE)).filter((p) => !best.some((b) => b.id === p.id));
  const feedback = await d.posts.recentFeedback(10);
  if (best.length === 0 && feedback.length === 0) {
    throw conflict('not enough data for proposals: record metrics on published posts or give reviewer feedback first');
  }
  const current = flattenStyle(await d.style.currentStored());
  const messages = proposalMessages(current, best, worst, feedback);
  let answer = await ask(gateway, model, messages, d.timeoutMs);
  let doc = extractJson(answer);
  if (doc === undefined) {
    answer = await ask(
      gateway,
      model,
      [...messages, { role: 'assistant', content: answer.slice(0, 8000) }, { role: 'user', content: 'Reply again with only the JSON object described above.' }],
      d.timeoutMs,
    );
    doc = extractJson(answer);
  }
  const entries = Array.isArray(doc) ? doc : Array.isArray((doc as { proposals?: unknown })?.proposals) ? (doc as { proposals: unknown[] }).proposals : null;
  if (!entries) return { proposals: [], dropped: [{ index: -1, reason: doc === undefined ? 'model answer is not valid JSON' : 'model answer has no "proposals" array' }] };

  const dropped: GenerateResult['dropped'] = [];
  const fresh: NewProposal[] = [];
  entries.slice(0, MAX_PROPOSALS).forEach((e, index) => {
    const r = checkProposal(e, current);
    if (typeof r === 'string') dropped.push({ index, reason: r });
    else fresh.push({ ...r, model });
  });
  if (entries.length > MAX_PROPOSALS) dropped.push({ index: MAX_PROPOSALS, reason: `only the first ${MAX_PROPOSALS} proposals are kept` });
  const ids = await d.tx(async (r) => {
    const ids = await r.proposals.insertMany(fresh);
    if (ids.length) await r.activity.add('proposals_generated', `${ids.length} improvement proposal${ids.length === 1 ? '' : 's'} generated`);
    return ids;
  });
  const proposals: Proposal[] = [];
  for (const id of ids) proposals.push((await d.proposals.get(id))!);
  return { proposals, dropped };
}

async function ask(gateway: GatewayHandle, model: string, messages: GatewayChatMessage[], timeoutMs: number): Promise<string> {
  try {
    const r = await gateway.chat({ model, messages, temperature: 0.4, max_tokens: 2048, json: true }, { signal: AbortSignal.timeout(timeoutMs) });
    return typeof r.content === 'string' ? r.content : '';
  } catch (e) {
    throw chatFailure('generating proposals', model, e);
  }
}

function proposalMessages(current: StylePatch, best: Post[], worst: Post[], feedback: Awaited<ReturnType<PostsRepo['recentFeedback']>>): GatewayChatMessage[] {
  const show = (p: Post) => `- post ${p.id} (${p.engagement_rate}% engagement, ${p.impressions} impressions, category ${p.category || 'none'}): ${JSON.stringify(p.content)}`;
  const lines = [
    'You improve the writing style of an X (Twitter) account from evidence.',
    `Current style: ${JSON.stringify(current)}`,
    '',
    'Best performing posts:',
    ...(best.length ? best.map(show) : ['- none yet']),
    '',
    'Worst performing posts:',
    ...(worst.length ? worst.map(show) : ['- none yet']),
    '',
    'Reviewer feedback:',
    ...(feedback.length
      ? feedback.map((f) => `- ${f.status}${f.feedback ? `, note ${JSON.stringify(f.feedback)}` : ''}${f.original_content && f.original_content !== f.content ? `, edited from ${JSON.stringify(f.original_content)} to ${JSON.stringify(f.content)}` : `: ${JSON.stringify(f.content)}`}`)
      : ['- none yet']),
    '',
    `Propose at most ${MAX_PROPOSALS} changes. Answer with one JSON object only:`,
    '{"proposals": [{"title": "short title", "rationale": "why, citing the evidence", "evidence": ["post 12: 4.1% engagement"],',
    ' "changes": {"tone": "...", "topics": ["..."], "hashtag_policy": "always" | "never", "thread_preference": true | false}}]}',
    'Include in "changes" only the fields you want to change.',
  ];
  return [
    { role: 'system', content: lines.join('\n') },
    { role: 'user', content: 'Propose style improvements now.' },
  ];
}

/** A stored proposal from one model entry, or the reason it is dropped. */
export function checkProposal(e: unknown, current: StylePatch): Omit<NewProposal, 'model'> | string {
  if (!e || typeof e !== 'object' || Array.isArray(e)) return 'entry is not an object';
  const o = e as Record<string, unknown>;
  const changes = (o.changes ?? o.proposed_value ?? o.proposed) as Record<string, unknown> | undefined;
  if (!changes || typeof changes !== 'object' || Array.isArray(changes)) return 'entry has no "changes" object';
  const proposed: StylePatch = {};
  const before: StylePatch = {};
  if (changes.tone !== undefined) {
    if (typeof changes.tone !== 'string' || changes.tone.trim() === '' || changes.tone.length > 500) return '"tone" must be a non-empty string of at most 500 characters';
    if (changes.tone.trim() !== current.tone) {
      proposed.tone = changes.tone.trim();
      before.tone = current.tone;
    }
  }
  if (changes.topics !== undefined) {
    const t = changes.topics;
    if (!Array.isArray(t) || t.length > 50 || t.some((x) => typeof x !== 'string' || x.trim() === '' || x.length > 100)) {
      return '"topics" must be an array of at most 50 non-empty strings';
    }
    const topics = [...new Set((t as string[]).map((x) => x.trim()))];
    if (JSON.stringify(topics) !== JSON.stringify(current.topics)) {
      proposed.topics = topics;
      before.topics = current.topics;
    }
  }
  if (changes.hashtag_policy !== undefined) {
    if (changes.hashtag_policy !== 'always' && changes.hashtag_policy !== 'never') return '"hashtag_policy" must be "always" or "never"';
    if (changes.hashtag_policy !== current.hashtag_policy) {
      proposed.hashtag_policy = changes.hashtag_policy;
      before.hashtag_policy = current.hashtag_policy;
    }
  }
  if (changes.thread_preference !== undefined) {
    if (typeof changes.thread_preference !== 'boolean') return '"thread_preference" must be a boolean';
    if (changes.thread_preference !== current.thread_preference) {
      proposed.thread_preference = changes.thread_preference;
      before.thread_preference = current.thread_preference;
    }
  }
  if (Object.keys(proposed).length === 0) return 'proposal changes nothing';
  const title = typeof o.title === 'string' && o.title.trim() ? o.title.trim().slice(0, 200) : `Change ${Object.keys(proposed).join(', ')}`;
  const rationale = typeof o.rationale === 'string' ? o.rationale.trim().slice(0, 2000) : '';
  const evidence = Array.isArray(o.evidence) ? o.evidence.filter((x): x is string => typeof x === 'string').slice(0, 20).map((x) => x.slice(0, 300)) : [];
  return { title, rationale, evidence, current_value: before, proposed_value: proposed };
}
