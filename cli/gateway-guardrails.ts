/** `ctl gateway guardrails list|test`: the guardrails (/api/guardrails*). */
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { request } from './client.js';
import { outputFormat, printData, printRows } from './output.js';
import { action, collect, UsageError } from './run.js';

interface TestView {
  blocked: boolean;
  blockedBy?: string;
  results: { name: string; action: string; fired: boolean; findings: { kind: string }[] }[];
  output: string;
}

export function registerGuardrails(g: Command, auth: () => Record<string, string>): void {
  const api = <T>(method: string, path: string, body?: unknown) => request<T>({ host: 'gateway', method, path, body, headers: auth() });
  const gr = g.command('guardrails').description('guardrails run on every inference request (/api/guardrails*): list, test');
  gr.command('list')
    .description('the guardrails in the order they run, with their action')
    .action(
      action(async () => {
        const r = await api<{ guardrails: { name: string; enabled: boolean; action: string; priority: number; description: string }[] }>('GET', '/api/guardrails');
        await printRows(
          r.guardrails,
          [
            { header: 'name', get: (x) => x.name },
            { header: 'enabled', get: (x) => x.enabled },
            { header: 'action', get: (x) => x.action },
            { header: 'priority', get: (x) => x.priority },
            { header: 'looks for', get: (x) => x.description },
          ],
          r,
        );
      }),
    );
  gr.command('test [text]')
    .description('which guardrails fire on a text (or --file, or standard input) and what reaches the model; exit status 1 when one would block')
    .option('--file <file>', 'read the text from a file')
    .option('--disable <name>', 'leave a guardrail out, as x-gateway-disabled-guardrails does (repeatable)', collect, [])
    .action(
      action(async (text: string | undefined, o: { file?: string; disable: string[] }) => {
        const input = text ?? (o.file ? readFileSync(o.file, 'utf8') : process.stdin.isTTY ? undefined : readFileSync(0, 'utf8'));
        if (input === undefined) throw new UsageError('give the text, --file, or pipe it on standard input');
        const r = await api<TestView>('POST', '/api/guardrails/test', { input, ...(o.disable.length ? { disabledGuardrails: o.disable } : {}) });
        if (r.blocked) process.exitCode = 1;
        if (outputFormat() !== 'table') return printData(r);
        for (const x of r.results) {
          if (x.fired) process.stderr.write(`${x.name}: ${x.action} (${[...new Set(x.findings.map((f) => f.kind))].join(', ')})\n`);
        }
        if (r.blocked) process.stderr.write(`blocked by ${r.blockedBy}\n`);
        else process.stdout.write(r.output.endsWith('\n') ? r.output : `${r.output}\n`);
      }),
    );
}
