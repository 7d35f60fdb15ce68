/** `ctl gateway compress preview`: what a compression mode does to a text (/api/compression/preview). */
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { request } from './client.js';
import { outputFormat, printData } from './output.js';
import { action, UsageError } from './run.js';

export function registerCompress(g: Command, auth: () => Record<string, string>): void {
  const c = g.command('compress').description('prompt compression (/api/compression/*): preview');
  c.command('preview [text]')
    .description('compress a text (an argument, --file, or standard input) with a mode and print the result; tokens before and after go to standard error')
    .option('--mode <mode>', 'off, lite, standard, aggressive, ultra, rtk, stacked, engine:<id> or combo:<name>', 'standard')
    .option('--file <file>', 'read the text from a file')
    .option('--tool-output', 'treat the text as a tool result (what rtk filters)')
    .option('--command <cmd>', 'with --tool-output: the command that produced it (picks the rtk filter)')
    .action(
      action(async (text: string | undefined, o: { mode: string; file?: string; toolOutput?: boolean; command?: string }) => {
        const input = text ?? (o.file ? readFileSync(o.file, 'utf8') : process.stdin.isTTY ? undefined : readFileSync(0, 'utf8'));
        if (input === undefined) throw new UsageError('give the text, --file, or pipe it on standard input');
        const body = o.toolOutput
          ? {
              mode: o.mode,
              messages: [
                { role: 'user', content: 'tool output' },
                { role: 'tool', content: input },
              ],
            }
          : { mode: o.mode, text: input };
        if (o.toolOutput && o.command) {
          // The command only reaches rtk through a tool call; the test route takes it directly.
          const r = await request<{ text: string; filter: string; linesBefore: number; linesAfter: number }>({ host: 'gateway', method: 'POST', path: '/api/context/rtk/test', body: { output: input, command: o.command }, headers: auth() });
          if (outputFormat() !== 'table') return printData(r);
          process.stdout.write(`${r.text}\n`);
          process.stderr.write(`filter ${r.filter}: ${r.linesBefore} -> ${r.linesAfter} lines\n`);
          return;
        }
        const r = await request<{ compressed: string | { role: string; content: string }[]; originalTokens: number; compressedTokens: number; savingsPct: number; rules: { rule: string; count: number }[] }>({ host: 'gateway', method: 'POST', path: '/api/compression/preview', body, headers: auth() });
        if (outputFormat() !== 'table') return printData(r);
        const out = typeof r.compressed === 'string' ? r.compressed : r.compressed.filter((m) => m.role === 'tool').map((m) => m.content).join('\n');
        process.stdout.write(out.endsWith('\n') ? out : `${out}\n`);
        process.stderr.write(`${r.originalTokens} -> ${r.compressedTokens} tokens (${r.savingsPct}% saved)${r.rules.length ? `; ${r.rules.map((x) => `${x.rule}x${x.count}`).join(', ')}` : ''}\n`);
      }),
    );
}
