/**
 * Research stage: read every active source (each with its own deadline), record its health,
 * and drop items already used by earlier runs. A failing source never fails the run.
 */
import type { Egress } from '../egress/index.js';
import type { PipelineConfig } from './config.js';
import type { Source, SourcesRepo } from './data/sources.js';
import type { UsedItemsRepo } from './data/used-items.js';
import { fetchFeed } from './sources/feed.js';
import { fetchHackerNews } from './sources/hackernews.js';
import type { ResearchItem } from './sources/types.js';

export interface SourceReport {
  id: number;
  name: string;
  source_type: string;
  healthy: boolean;
  items: number;
  error: string | null;
  duration_ms: number;
}

export interface ResearchResult {
  sources: SourceReport[];
  fetched: number;
  /** Items not used before and not duplicated within this run. */
  fresh: ResearchItem[];
}

export interface ResearchDeps {
  egress: Egress;
  config: PipelineConfig;
  sources: SourcesRepo;
  usedItems: UsedItemsRepo;
  now: () => number;
}

const SOURCE_CONCURRENCY = 4;

export async function research(deps: ResearchDeps, onSource: (r: SourceReport) => void, signal?: AbortSignal): Promise<ResearchResult> {
  const list = await deps.sources.listForRun();
  const reports: SourceReport[] = [];
  const all: ResearchItem[] = [];
  let next = 0;
  const worker = async () => {
    while (next < list.length) {
      const source = list[next++]!;
      const { report, items } = await readSource(deps, source, signal);
      reports.push(report);
      all.push(...items);
      onSource(report);
    }
  };
  await Promise.all(Array.from({ length: Math.min(SOURCE_CONCURRENCY, list.length) }, worker));
  reports.sort((a, b) => a.id - b.id);

  // De-duplicate within the run first (same story from HN and a feed), then against earlier runs.
  const seen = new Set<string>();
  const unique: ResearchItem[] = [];
  for (const item of all) {
    if (item.keys.some((k) => seen.has(k))) continue;
    item.keys.forEach((k) => seen.add(k));
    unique.push(item);
  }
  const used = await deps.usedItems.used([...seen]);
  const fresh = unique.filter((i) => !i.keys.some((k) => used.has(k)));
  return { sources: reports, fetched: all.length, fresh };
}

async function readSource(deps: ResearchDeps, source: Source, outer?: AbortSignal): Promise<{ report: SourceReport; items: ResearchItem[] }> {
  const started = deps.now();
  const deadline = AbortSignal.timeout(deps.config.sourceTimeoutMs);
  const signal = outer ? AbortSignal.any([deadline, outer]) : deadline;
  const c = deps.config;
  try {
    const items =
      source.source_type === 'hackernews'
        ? await fetchHackerNews(
            deps.egress,
            source,
            { apiBaseUrl: c.hnApiBaseUrl, maxItems: c.maxItemsPerSource, timeoutMs: c.fetchTimeoutMs, maxBytes: c.maxResponseBytes },
            signal,
          )
        : await fetchFeed(deps.egress, source, { maxItems: c.maxItemsPerSource, timeoutMs: c.fetchTimeoutMs, maxBytes: c.maxResponseBytes }, signal);
    if (signal.aborted) throw new Error(`source deadline of ${c.sourceTimeoutMs} ms exceeded`);
    await deps.sources.recordSuccess(source.id, items.length);
    return { report: report(source, true, items.length, null, deps.now() - started), items };
  } catch (e) {
    const message = (e as Error).message || String(e);
    await deps.sources.recordFailure(source.id, message);
    return { report: report(source, false, 0, message, deps.now() - started), items: [] };
  }
}

function report(s: Source, healthy: boolean, items: number, error: string | null, ms: number): SourceReport {
  return { id: s.id, name: s.name, source_type: s.source_type, healthy, items, error, duration_ms: Math.max(0, ms) };
}
