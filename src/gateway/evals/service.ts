/**
 * Running an eval suite: every case against every model, through the gateway's own chat route
 * in-process (routing, fallback, usage and cost as for any request; no response cache, no memory),
 * graded, each result stored as it comes; then a summary per model (weighted score, passes, failures,
 * errors, mean latency, cost). A few calls run at once; runs left running by a stopped daemon are
 * marked failed at start.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { chatOnce, type InProcessCall } from '../in-process.js';
import { mapLimit } from '../../http/map-limit.js';
import { grade, type Grader, type Judge } from './graders.js';
import type { EvalCase, EvalResult, EvalRun, EvalStore, EvalSuite, ModelSummary } from './store.js';

const DEFAULT_GRADER: Grader = { type: 'contains', caseInsensitive: true };

interface ChatAnswer {
  text: string;
  latencyMs: number;
  cost: number;
}

export class EvalService {
  constructor(
    readonly store: EvalStore,
    private readonly call: () => InProcessCall,
    private readonly now: () => number,
    private readonly log: Logger,
    private readonly concurrency = 4,
  ) {}

  private async chat(model: string, input: EvalCase['input'], requestId: string): Promise<ChatAnswer> {
    const messages = typeof input === 'string' ? [{ role: 'user', content: input }] : input;
    const started = this.now();
    const r = await chatOnce(this.call(), { model, messages, temperature: 0 }, requestId);
    if (r.error !== undefined) throw new Error(`${model} answered ${r.status}: ${r.error}`);
    return { text: r.text, latencyMs: this.now() - started, cost: r.cost };
  }


  /** Start a run; it goes on in the background (`done` settles when it ends). */
  start(suite: EvalSuite, models: string[], judgeModel: string | undefined): { run: EvalRun; done: Promise<EvalRun> } {
    const run: EvalRun = { id: `evr_${randomBytes(6).toString('hex')}`, suiteId: suite.id, models, ...(judgeModel ? { judgeModel } : {}), status: 'running', startedAt: this.now() };
    this.store.saveRun(run);
    const done = this.execute(suite, run).catch((e: unknown) => {
      run.status = 'failed';
      run.error = (e as Error).message;
      run.finishedAt = this.now();
      this.store.saveRun(run);
      this.log.warn({ run: run.id, err: run.error }, 'gateway: eval run failed');
      return run;
    });
    return { run: { ...run }, done };
  }

  private async execute(suite: EvalSuite, run: EvalRun): Promise<EvalRun> {
    const judge: Judge | undefined = run.judgeModel ? async (prompt) => (await this.chat(run.judgeModel!, prompt, `${run.id}-judge-${randomBytes(3).toString('hex')}`)).text : undefined;
    const jobs: { c: EvalCase; model: string }[] = [];
    for (const model of run.models) for (const c of suite.cases) jobs.push({ c, model });
    const results = await mapLimit(jobs, this.concurrency, async ({ c, model }): Promise<EvalResult> => {
      const g = c.grader ?? suite.grader ?? DEFAULT_GRADER;
      let r: EvalResult;
      try {
        // The request id is also a dedup key: one per model and case.
        const a = await this.chat(model, c.input, `${run.id}-${model}-${c.id}`);
        const prompt = typeof c.input === 'string' ? c.input : c.input.map((m) => `${m.role}: ${m.content}`).join('\n');
        const verdict = await grade(g, a.text, c.expected, prompt, judge);
        r = { runId: run.id, caseId: c.id, model, passed: verdict.passed, score: verdict.score, output: a.text.slice(0, 20_000), reason: verdict.reason, error: null, latencyMs: a.latencyMs, cost: a.cost };
      } catch (e) {
        r = { runId: run.id, caseId: c.id, model, passed: false, score: 0, output: null, reason: null, error: (e as Error).message.slice(0, 1000), latencyMs: null, cost: null };
      }
      this.store.saveResult(r);
      return r;
    });
    run.summary = summarize(suite, run.models, results);
    run.status = 'completed';
    run.finishedAt = this.now();
    this.store.saveRun(run);
    return run;
  }
}

/** Per model: the weighted score (0..1), passes, failures, errors, mean latency and cost. */
export function summarize(suite: EvalSuite, models: string[], results: EvalResult[]): ModelSummary[] {
  const weight = new Map(suite.cases.map((c) => [c.id, c.weight ?? 1]));
  return models.map((model) => {
    const mine = results.filter((r) => r.model === model);
    const total = mine.reduce((n, r) => n + (weight.get(r.caseId) ?? 1), 0);
    const lat = mine.filter((r) => r.latencyMs !== null).map((r) => r.latencyMs!);
    return {
      model,
      score: total > 0 ? Number((mine.reduce((n, r) => n + r.score * (weight.get(r.caseId) ?? 1), 0) / total).toFixed(4)) : 0,
      passed: mine.filter((r) => r.passed).length,
      failed: mine.filter((r) => !r.passed && r.error === null).length,
      errors: mine.filter((r) => r.error !== null).length,
      avgLatencyMs: lat.length ? Math.round(lat.reduce((a, b) => a + b, 0) / lat.length) : null,
      costUsd: Number(mine.reduce((n, r) => n + (r.cost ?? 0), 0).toFixed(10)),
    };
  });
}
