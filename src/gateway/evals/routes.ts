/**
 * Evals (management auth):
 *   GET  /api/evals                 suites and recent runs; `runId` one run with its results; `suiteId` its runs
 *   POST /api/evals                 run a suite {suiteId, models[], judgeModel?, wait?}: 202 (running), or 200 when `wait`
 *   POST /api/evals/suites          create a suite {name, description?, grader?, cases[]}
 *   GET  /api/evals/suites/{id}     a suite, its runs and the latest score of every model it was run against
 */
import { randomBytes } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import { badRequest, conflict, notFound, HttpError } from '../../http/errors.js';
import type { Router } from '../../http/router.js';
import { compile } from '../../http/schema.js';
import { resolveFor } from '../completion.js';
import { intQuery, ok, readPlainObject, validated } from '../routes/common.js';
import type { GatewayServices } from '../services.js';
import { checkGrader, GRADER_TYPES, type Grader } from './graders.js';
import type { EvalRun, EvalSuite } from './store.js';

const GraderSchema = Type.Object(
  {
    type: Type.Union(GRADER_TYPES.map((t) => Type.Literal(t))),
    caseInsensitive: Type.Optional(Type.Boolean()),
    pattern: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
    schema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    criteria: Type.Optional(Type.String({ minLength: 1, maxLength: 4000 })),
  },
  { additionalProperties: false },
);
const Message = Type.Object({ role: Type.Union([Type.Literal('system'), Type.Literal('user'), Type.Literal('assistant')]), content: Type.String({ maxLength: 100_000 }) }, { additionalProperties: false });
const SuiteBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    grader: Type.Optional(GraderSchema),
    cases: Type.Array(
      Type.Object(
        {
          id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
          input: Type.Union([Type.String({ minLength: 1, maxLength: 100_000 }), Type.Array(Message, { minItems: 1, maxItems: 100 })]),
          expected: Type.Optional(Type.String({ maxLength: 100_000 })),
          grader: Type.Optional(GraderSchema),
          weight: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1000 })),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 1000 },
    ),
  },
  { additionalProperties: false },
);
const validateSuite = compile(SuiteBody);
const validateRun = compile(
  Type.Object(
    {
      suiteId: Type.String({ minLength: 1, maxLength: 100 }),
      models: Type.Array(Type.String({ minLength: 1, maxLength: 512 }), { minItems: 1, maxItems: 20 }),
      judgeModel: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
      wait: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
);

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
const runView = (r: EvalRun) => ({ ...r, judgeModel: r.judgeModel ?? null, summary: r.summary ?? null, error: r.error ?? null, startedAt: iso(r.startedAt), finishedAt: iso(r.finishedAt) });
const suiteView = (s: EvalSuite) => ({ ...s, description: s.description ?? null, grader: s.grader ?? null, createdAt: iso(s.createdAt), updatedAt: iso(s.updatedAt) });

/** Wait for a run this long at most when `wait` is asked (then: 202 with the run as it stands). */
const WAIT_MS = 120_000;

export function evalRoutes(r: Router, svc: GatewayServices): void {
  const m = (route: ReturnType<Router['get']>) => route.tag('auth', 'management');
  const evals = svc.evals;

  m(
    r.get('/api/evals', (ctx) => {
      const runId = ctx.query.get('runId');
      if (runId) {
        const run = evals.store.run(runId);
        if (!run) throw notFound(`eval run ${runId} not found`);
        return ok(ctx, { ...runView(run), results: evals.store.results(run.id) });
      }
      const suiteId = ctx.query.get('suiteId') || undefined;
      const limit = intQuery(ctx, 'limit', 50, 1, 500);
      ok(ctx, {
        suites: evals.store.suites().map((s) => ({ id: s.id, name: s.name, description: s.description ?? null, cases: s.cases.length, createdAt: iso(s.createdAt) })),
        runs: evals.store.runs(suiteId, limit).map(runView),
      });
    }),
  );

  m(
    r.post('/api/evals/suites', async (ctx) => {
      const b: Static<typeof SuiteBody> = validated(validateSuite, await readPlainObject(ctx));
      if (evals.store.suite(b.name)) throw conflict(`an eval suite named ${b.name} exists`);
      const seen = new Set<string>();
      const cases = b.cases.map((c, i) => {
        const id = c.id ?? `case-${i + 1}`;
        if (seen.has(id)) throw badRequest(`cases[${i}]: duplicate id ${id}`);
        seen.add(id);
        const problem = checkGrader((c.grader ?? b.grader ?? { type: 'contains' }) as Grader, c.expected, `cases[${i}]`);
        if (problem) throw badRequest(problem);
        return { ...c, id, ...(c.grader ? { grader: c.grader as Grader } : {}) };
      });
      const t = svc.clock.now();
      const suite: EvalSuite = { id: `evs_${randomBytes(6).toString('hex')}`, name: b.name, ...(b.description ? { description: b.description } : {}), ...(b.grader ? { grader: b.grader as Grader } : {}), cases, createdAt: t, updatedAt: t };
      evals.store.saveSuite(suite);
      ok(ctx, suiteView(suite), 201);
    }),
  );

  m(
    r.get('/api/evals/suites/:id', (ctx) => {
      const s = evals.store.suite(ctx.params.id!);
      if (!s) throw notFound(`eval suite ${ctx.params.id} not found`);
      const runs = evals.store.runs(s.id, 100);
      // The latest completed score of every model the suite was run against: the comparison across models.
      const leaderboard = new Map<string, { model: string; score: number; passed: number; failed: number; errors: number; avgLatencyMs: number | null; costUsd: number; runId: string; at: string | null }>();
      for (const run of runs) {
        if (run.status !== 'completed') continue;
        for (const m of run.summary ?? []) if (!leaderboard.has(m.model)) leaderboard.set(m.model, { ...m, runId: run.id, at: iso(run.finishedAt) });
      }
      ok(ctx, { ...suiteView(s), runs: runs.map(runView), leaderboard: [...leaderboard.values()].sort((a, b) => b.score - a.score || a.model.localeCompare(b.model)) });
    }),
  );

  m(
    r.post('/api/evals', async (ctx) => {
      const b = validated(validateRun, await readPlainObject(ctx));
      const suite = evals.store.suite(b.suiteId);
      if (!suite) throw notFound(`eval suite ${b.suiteId} not found`);
      for (const model of [...b.models, ...(b.judgeModel ? [b.judgeModel] : [])]) {
        try {
          resolveFor(svc, model, { trusted: true });
        } catch (e) {
          throw badRequest(`model ${model}: ${(e as Error).message}`);
        }
      }
      if (!b.judgeModel && suite.cases.some((c) => (c.grader ?? suite.grader)?.type === 'llm-judge')) throw badRequest('the suite has llm-judge cases: give judgeModel');
      const { run, done } = evals.start(suite, [...new Set(b.models)], b.judgeModel);
      if (!b.wait) return ok(ctx, runView(run), 202);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const finished = await Promise.race([done, new Promise<undefined>((res) => (timer = setTimeout(() => res(undefined), WAIT_MS)))]);
      clearTimeout(timer);
      if (!finished) return ok(ctx, runView(evals.store.run(run.id) ?? run), 202);
      if (finished.status === 'failed') throw new HttpError(502, `eval run ${finished.id} failed: ${finished.error}`, { code: 'eval_failed' });
      ok(ctx, { ...runView(finished), results: evals.store.results(finished.id) });
    }),
  );
}
