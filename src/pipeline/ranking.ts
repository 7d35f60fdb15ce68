/**
 * Ranking: freshness (HN-style gravity on age), popularity (log of points and comments) and a boost
 * for items matching a style topic; then a pick that keeps at most half of the batch from one source.
 */
import type { ResearchItem } from './sources/types.js';

export interface RankedItem extends ResearchItem {
  rank: number;
  matchedTopics: string[];
}

const GRAVITY = 1.8;
const TOPIC_BOOST = 2;

export function rankItems(items: ResearchItem[], topics: string[], nowMs: number): RankedItem[] {
  const lowered = topics.map((t) => t.trim().toLowerCase()).filter(Boolean);
  return items
    .map((item) => {
      const ageHours = item.publishedAt === null ? 24 : Math.max(0, (nowMs - item.publishedAt) / 3_600_000);
      const freshness = 1 / Math.pow(ageHours + 2, GRAVITY);
      const popularity = 1 + Math.log1p(item.score) + 0.5 * Math.log1p(item.comments);
      const haystack = `${item.title} ${item.summary}`.toLowerCase();
      const matchedTopics = lowered.filter((t) => haystack.includes(t));
      const rank = freshness * popularity * (matchedTopics.length > 0 ? TOPIC_BOOST : 1);
      return { ...item, rank, matchedTopics };
    })
    .sort((a, b) => b.rank - a.rank || a.title.localeCompare(b.title));
}

/** The top `n` items, at most ceil(n/2) from one source unless there is nothing else. */
export function pickBatch(ranked: RankedItem[], n: number): RankedItem[] {
  const perSource = Math.max(1, Math.ceil(n / 2));
  const counts = new Map<number, number>();
  const picked: RankedItem[] = [];
  const skipped: RankedItem[] = [];
  for (const item of ranked) {
    if (picked.length >= n) break;
    const c = counts.get(item.sourceId) ?? 0;
    if (c >= perSource) {
      skipped.push(item);
      continue;
    }
    counts.set(item.sourceId, c + 1);
    picked.push(item);
  }
  for (const item of skipped) {
    if (picked.length >= n) break;
    picked.push(item);
  }
  return picked;
}
