/** `ctl gateway eval add|list|run|show` (/api/evals, /api/evals/suites). */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { parse } from 'yaml';
import { request } from './client.js';
import { outputFormat, printData, printRows } from './output.js';
import { action, collect, UsageError } from './run.js';

interface Summary {
  model: string;
  score: number;
  passed: number;
  failed: number;
  errors: number;
  avgLatencyMs: number | null;
  costUsd: number;
}

export function registerEvals(g: Command, auth: () => Record<string, string>): void {
  const api = <T>(method: string, path: string, body?: unknown, query?: Record<string, string | number | undefined>) => request<T>({ host: 'gateway', method, path, body, query, headers: auth() });
  const scores = (rows: Summary[], raw: unknown) =>
    printRows(
      rows,
      [
        { header: 'model', get: (x) => x.model },
        { header: 'score', get: (x) => `${(x.score * 100).toFixed(1)}%` },
        { header: 'passed', get: (x) => x.passed },
        { header: 'failed', get: (x) => x.failed },
        { header: 'errors', get: (x) => x.errors },
        { header: 'avg ms', get: (x) => x.avgLatencyMs ?? '' },
        { header: 'cost $', get: (x) => x.costUsd },
      ],
      raw,
    );
  const e = g.command('eval').description('eval suites run against models, scored and compared (/api/evals): add, list, run, show');
  e.command('add <file>')
    .description('save a suite from a JSON or YAML file ({name, description?, grader?, cases: [{id?, input, expected?, grader?, weight?}]}); prints its id')
    .action(
      action(async (file: string) => {
        let text: string;
        try {
          text = readFileSync(file, 'utf8');
        } catch {
          throw new UsageError(`cannot read ${file}`);
        }
        const v = await api<{ id: string }>('POST', '/api/evals/suites', parse(text));
        if (outputFormat() !== 'table') return printData(v);
        process.stdout.write(`${v.id}\n`);
      }),
    );
  e.command('list')
    .description('the suites and the latest runs')
    .action(
      action(async () => {
        const r = await api<{ suites: { id: string; name: string; cases: number }[]; runs: { id: string; suiteId: string; status: string; models: string[]; startedAt: string }[] }>('GET', '/api/evals');
        if (outputFormat() !== 'table') return printData(r);
        await printRows(r.suites, [
          { header: 'suite', get: (x) => x.id },
          { header: 'name', get: (x) => x.name },
          { header: 'cases', get: (x) => x.cases },
        ], r);
        process.stdout.write('\n');
        await printRows(r.runs, [
          { header: 'run', get: (x) => x.id },
          { header: 'suite', get: (x) => x.suiteId },
          { header: 'status', get: (x) => x.status },
          { header: 'models', get: (x) => x.models.join(',') },
          { header: 'started', get: (x) => x.startedAt },
        ], r);
      }),
    );
  e.command('run <suite>')
    .description('run a suite (id or name) against models and wait for the scores')
    .option('--model <id>', 'a model to evaluate (repeatable)', collect, [])
    .option('--judge <model>', 'the judge model of llm-judge cases')
    .option('--no-wait', 'start it and print the run id')
    .action(
      action(async (suite: string, o: { model: string[]; judge?: string; wait: boolean }) => {
        if (o.model.length === 0) throw new UsageError('give at least one --model');
        const r = await api<{ id: string; status: string; summary: Summary[] | null }>('POST', '/api/evals', { suiteId: suite, models: o.model, ...(o.judge ? { judgeModel: o.judge } : {}), wait: o.wait });
        if (outputFormat() !== 'table') return printData(r);
        if (!o.wait || !r.summary) return void process.stdout.write(`${r.id} ${r.status}\n`);
        await scores(r.summary, r);
      }),
    );
  e.command('show <id>')
    .description('a run (evr_…) with its scores, or a suite (id or name) with the latest score of each model')
    .action(
      action(async (id: string) => {
        if (id.startsWith('evr_')) {
          const r = await api<{ status: string; summary: Summary[] | null }>('GET', '/api/evals', undefined, { runId: id });
          if (outputFormat() !== 'table' || !r.summary) return printData(r);
          return scores(r.summary, r);
        }
        const s = await api<{ leaderboard: Summary[] }>('GET', `/api/evals/suites/${encodeURIComponent(id)}`);
        if (outputFormat() !== 'table') return printData(s);
        await scores(s.leaderboard, s);
      }),
    );
}
