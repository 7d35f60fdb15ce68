/**
 * One pipeline run: research → rank → draft through the gateway → store a batch of pending posts.
 * One run at a time (a second trigger gets 409). Progress is kept in memory for `GET
 * /api/pipeline/status` and the run's row in `runs` records its outcome.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { InternalAlerts } from '../http/component.js';
import type { Egress } from '../egress/index.js';
import type { GatewayHandle } from '../http/gateway-handle.js';
import type { Clock } from '../http/clock.js';
import { HttpError, badRequest, conflict } from '../http/errors.js';
import type { PipelineConfig } from './config.js';
import type { ActivityRepo } from './data/activity.js';
import type { Repos } from './data/repos.js';
import type { PostsRepo } from './data/posts.js';
import type { RunsRepo } from './data/runs.js';
import type { SourcesRepo } from './data/sources.js';
import type { StyleRepo } from './data/style.js';
import type { UsedItemsRepo } from './data/used-items.js';
import { parseDrafts, type RejectedDraft } from './drafting/parse.js';
import { draftingMessages, repairMessages } from './drafting/prompt.js';
import { chatFailure, requireGateway } from './gateway-access.js';
import type { ModelSettings } from './model-setting.js';
import { pickBatch, rankItems } from './ranking.js';
import { research, type SourceReport } from './research.js';
import { nowIso } from './time.js';

export interface RunnerDeps {
  tx<T>(fn: (r: Repos) => Promise<T>): Promise<T>;
  clock: Clock;
  log: Logger;
  egress: Egress;
  config: PipelineConfig;
  gateway: () => GatewayHandle | undefined;
  model: ModelSettings;
  posts: PostsRepo;
  sources: SourcesRepo;
  style: StyleRepo;
  usedItems: UsedItemsRepo;
  runs: RunsRepo;
  activity: ActivityRepo;
  /** ctl's alert manager: PipelineRunFailed until a run completes, PipelineSourceUnhealthy per source. */
  alerts?: InternalAlerts;
  /**
   * Several daemons on one database: one run at a time across them. `take` answers false while
   * another daemon runs one; `release` ends this daemon's turn.
   */
  runLock?: { take(): Promise<boolean>; release(): Promise<void> };
}

export type Stage = 'starting' | 'fetching' | 'ranking' | 'drafting' | 'saving' | 'done';

export interface RunProgress {
  batch_id: string;
  status: 'running' | 'completed' | 'failed';
  stage: Stage;
  model: string;
  started_at: string;
  finished_at: string | null;
  sources_total: number;
  sources_done: number;
  sources_healthy: number;
  sources: SourceReport[];
  items_fetched: number;
  items_new: number;
  items_selected: number;
  post_count: number;
  error: string | null;
}

export interface RunResult {
  batch_id: string;
  post_count: number;
  post_ids: number[];
  status: 'completed';
  model: string;
  sources_total: number;
  sources_healthy: number;
  sources: SourceReport[];
  items_fetched: number;
  items_new: number;
  items_selected: number;
  posts_rejected: number;
  rejected: RejectedDraft[];
  repairs: { item: number; repairs: string[] }[];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  started_at: string;
  finished_at: string;
  duration_ms: number;
}

const FEEDBACK_EXAMPLES = 8;

export class PipelineRunner {
  private current: RunProgress | null = null;
  private last: RunProgress | null = null;
  private readonly abort = new AbortController();

  constructor(private readonly d: RunnerDeps) {}

  get running(): boolean {
    return this.current !== null;
  }

  /** The run in progress, else the last one this process ran (null after a restart). */
  progress(): { running: boolean; run: RunProgress | null } {
    return { running: this.current !== null, run: this.current ?? this.last };
  }

  /**
   * Check the preconditions and start a run. Throws 409 (a run is in progress), 503 (no gateway)
   * or 400 (no model configured) before anything starts; `done` settles with the result.
   */
  async start(): Promise<{ batchId: string; done: Promise<RunResult> }> {
    if (this.current) throw conflict(`a pipeline run is already in progress (batch ${this.current.batch_id})`);
    if (this.starting) throw conflict('a pipeline run is already starting');
    this.starting = true;
    let locked = false;
    try {
      const gateway = requireGateway(this.d.gateway);
      const model = (await this.d.model.current()).model_id;
      if (!model) throw badRequest('no model configured: set one with PUT /api/settings/model (ctl pipeline model set) or PIPELINE_MODEL');
      if (this.d.runLock) {
        if (!(await this.d.runLock.take())) throw conflict('a pipeline run is in progress on another daemon');
        locked = true;
        // No run is going anywhere now: one left `running` by a daemon that died is over.
        await this.d.runs.markInterrupted();
      }
      const started = await this.begin(gateway, model);
      locked = false;
      return started;
    } finally {
      this.starting = false;
      if (locked) await this.d.runLock!.release();
    }
  }

  private starting = false;

  private async begin(gateway: GatewayHandle, model: string): Promise<{ batchId: string; done: Promise<RunResult> }> {
    const batchId = newBatchId(this.d.clock.now());
    const progress: RunProgress = {
      batch_id: batchId,
      status: 'running',
      stage: 'starting',
      model,
      started_at: nowIso(this.d.clock),
      finished_at: null,
      sources_total: 0,
      sources_done: 0,
      sources_healthy: 0,
      sources: [],
      items_fetched: 0,
      items_new: 0,
      items_selected: 0,
      post_count: 0,
      error: null,
    };
    await this.d.runs.start(batchId, model);
    this.current = progress;
    const done = this.execute(progress, gateway).then(
      (result) => {
        progress.status = 'completed';
        this.d.alerts?.resolve('PipelineRunFailed', {});
        this.d.alerts?.reconcile(
          'PipelineSourceUnhealthy',
          result.sources
            .filter((s) => !s.healthy)
            .map((s) => ({ alertname: 'PipelineSourceUnhealthy', labels: { source_id: String(s.id), source: s.name }, annotations: { summary: `source ${s.name} failed in run ${batchId}: ${s.error ?? 'no items'}` }, path: `/api/sources/${s.id}` })),
        );
        return result;
      },
      async (e: unknown) => {
        const err = e instanceof HttpError ? e : new HttpError(500, `pipeline run failed: ${(e as Error).message}`, { cause: e });
        progress.status = 'failed';
        progress.error = err.message;
        progress.stage = 'done';
        progress.finished_at = nowIso(this.d.clock);
        this.d.alerts?.fire({ alertname: 'PipelineRunFailed', labels: {}, annotations: { summary: `pipeline run ${batchId} failed: ${err.message}`, batch_id: batchId }, path: `/api/pipeline/runs/${batchId}` });
        try {
          await this.d.runs.finish(batchId, 'failed', 0, null, err.message);
          await this.d.activity.add('pipeline_failed', `Pipeline run ${batchId} failed: ${err.message}`, 'batch', batchId);
        } catch (dbErr) {
          this.d.log.error({ err: dbErr }, 'recording a failed pipeline run');
        }
        throw err;
      },
    );
    done
      .finally(async () => {
        this.last = progress;
        this.current = null;
        await this.d.runLock?.release();
      })
      .catch(() => undefined);
    return { batchId, done };
  }

  /** Cancel a run in progress (daemon stop). */
  stop(): void {
    this.abort.abort();
  }

  private async setStage(p: RunProgress, stage: Stage): Promise<void> {
    p.stage = stage;
    await this.d.runs.stage(p.batch_id, stage);
  }

  private async execute(p: RunProgress, gateway: GatewayHandle): Promise<RunResult> {
    const d = this.d;
    const startedMs = d.clock.now();
    await this.setStage(p, 'fetching');
    p.sources_total = (await d.sources.listForRun()).length;
    const found = await research(
      { egress: d.egress, config: d.config, sources: d.sources, usedItems: d.usedItems, now: () => d.clock.now() },
      (r) => {
        p.sources_done++;
        if (r.healthy) p.sources_healthy++;
        p.sources.push(r);
      },
      this.abort.signal,
    );
    p.sources = found.sources;
    p.items_fetched = found.fetched;
    p.items_new = found.fresh.length;

    await this.setStage(p, 'ranking');
    const style = await d.style.currentStored();
    const selected = pickBatch(rankItems(found.fresh, style.topics, d.clock.now()), d.config.batchSize);
    p.items_selected = selected.length;

    let rejected: RejectedDraft[] = [];
    let drafted: ReturnType<typeof parseDrafts>['posts'] = [];
    const usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
    if (selected.length > 0) {
      await this.setStage(p, 'drafting');
      const rules = { maxLength: d.config.maxPostLength, useHashtags: style.use_hashtags, threads: style.thread_style };
      const messages = draftingMessages(style, selected, await d.posts.recentFeedback(FEEDBACK_EXAMPLES), d.config.maxPostLength);
      const first = await this.chat(gateway, p.model, messages, usage);
      let parsed = parseDrafts(first, selected.length, rules);
      if (!parsed.json) {
        // One repair round trip when the answer held no JSON at all.
        const second = await this.chat(gateway, p.model, repairMessages(messages, first), usage);
        const again = parseDrafts(second, selected.length, rules);
        if (again.json) parsed = again;
      }
      drafted = parsed.posts;
      rejected = parsed.rejected;
    }

    await this.setStage(p, 'saving');
    const finishedAt = nowIso(d.clock);
    let postIds: number[] = [];
    const result = (ids: number[]): RunResult => ({
      batch_id: p.batch_id,
      post_count: ids.length,
      post_ids: ids,
      status: 'completed',
      model: p.model,
      sources_total: found.sources.length,
      sources_healthy: found.sources.filter((s) => s.healthy).length,
      sources: found.sources,
      items_fetched: found.fetched,
      items_new: found.fresh.length,
      items_selected: selected.length,
      posts_rejected: rejected.length,
      rejected,
      repairs: drafted.filter((x) => x.repairs.length > 0).map((x) => ({ item: x.item + 1, repairs: x.repairs })),
      usage,
      started_at: p.started_at,
      finished_at: finishedAt,
      duration_ms: Math.max(0, d.clock.now() - startedMs),
    });
    await d.tx(async (r) => {
      postIds = await r.posts.insertMany(
        drafted.map((x) => {
          const item = selected[x.item]!;
          return {
            batch_id: p.batch_id,
            content: x.content,
            thread: x.thread,
            category: item.category,
            source_id: item.sourceId,
            source_name: item.sourceName,
            source_title: item.title,
            source_url: item.url,
            model: p.model,
          };
        }),
      );
      // Only items that became posts are spent; the others may be drafted by a later run.
      await r.usedItems.markUsed(
        drafted.flatMap((x) => selected[x.item]!.keys),
        p.batch_id,
      );
      await r.runs.finish(p.batch_id, 'completed', postIds.length, result(postIds), null);
      await r.activity.add(
        'pipeline_run',
        `Pipeline run ${p.batch_id} drafted ${postIds.length} post${postIds.length === 1 ? '' : 's'} (${result(postIds).sources_healthy}/${found.sources.length} sources healthy)`,
        'batch',
        p.batch_id,
      );
    });
    p.post_count = postIds.length;
    p.stage = 'done';
    p.finished_at = finishedAt;
    return result(postIds);
  }

  private async chat(
    gateway: GatewayHandle,
    model: string,
    messages: ReturnType<typeof draftingMessages>,
    usage: RunResult['usage'],
  ): Promise<string> {
    const signal = AbortSignal.any([AbortSignal.timeout(this.d.config.llmTimeoutMs), this.abort.signal]);
    try {
      const r = await gateway.chat({ model, messages, temperature: 0.7, max_tokens: 4096, json: true }, { signal });
      usage.prompt_tokens += r.usage?.prompt_tokens ?? 0;
      usage.completion_tokens += r.usage?.completion_tokens ?? 0;
      usage.total_tokens += r.usage?.total_tokens ?? 0;
      return typeof r.content === 'string' ? r.content : '';
    } catch (e) {
      throw chatFailure('drafting', model, e);
    }
  }
}

function newBatchId(nowMs: number): string {
  const stamp = new Date(nowMs).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}
