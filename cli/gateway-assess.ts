/** `ctl gateway assess [--provider ID | --model REF] [--show]` (/api/assess). */
import type { Command } from 'commander';
import { request } from './client.js';
import { printRows } from './output.js';
import { action, UsageError } from './run.js';

interface Assessment {
  model: string;
  ok: boolean;
  latencyMs: number;
  category: string;
  tier: string;
  error: string | null;
  assessedAt: string;
}

export function registerAssess(g: Command, auth: () => Record<string, string>): void {
  g.command('assess')
    .description('probe chat models with a one-token request and categorise them: latency class, price tier (POST /api/assess); --show prints the latest without probing')
    .option('--provider <id>', 'only this provider\'s models')
    .option('--model <ref>', 'only this model (provider/model)')
    .option('--show', 'the latest assessments, no new probes')
    .action(
      action(async (o: { provider?: string; model?: string; show?: boolean }) => {
        if (o.provider && o.model) throw new UsageError('give --provider or --model, not both');
        const headers = auth();
        const scope = o.model ? { type: 'model', modelId: o.model } : o.provider ? { type: 'provider', providerId: o.provider } : { type: 'all' };
        const r = o.show
          ? await request<{ assessments: Assessment[] }>({ host: 'gateway', method: 'GET', path: '/api/assess', headers })
          : await request<{ results: Assessment[] }>({ host: 'gateway', method: 'POST', path: '/api/assess', body: { scope, trigger: 'cli' }, headers });
        const rows = 'assessments' in r ? r.assessments : r.results;
        await printRows(
          rows,
          [
            { header: 'model', get: (x) => x.model },
            { header: 'category', get: (x) => x.category },
            { header: 'ms', get: (x) => x.latencyMs },
            { header: 'tier', get: (x) => x.tier },
            { header: 'error', get: (x) => x.error ?? '' },
          ],
          r,
        );
      }),
    );
}
