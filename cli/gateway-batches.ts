/**
 * `ctl gateway file …` and `ctl gateway batch …`: the gateway's Files and Batch APIs from the
 * terminal (over the socket, or --url with --api-key). Uploads and downloads are streamed.
 */
import { createWriteStream, existsSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import { request } from './client.js';
import { check, postForm, sendStream, text } from './gateway-media.js';
import { outputFormat, printData, printObject, printRows } from './output.js';
import { action, collect, intOption, UsageError } from './run.js';

interface FileView {
  id: string;
  bytes: number;
  created_at: number;
  filename: string;
  purpose: string;
  expires_at?: number;
}

interface BatchView {
  id: string;
  endpoint: string;
  status: string;
  input_file_id: string;
  output_file_id: string | null;
  error_file_id: string | null;
  created_at: number;
  errors: { data: { line: number | null; code: string; message: string }[] } | null;
  request_counts: { total: number; completed: number; failed: number };
  metadata: Record<string, string> | null;
}

const ENDED = new Set(['completed', 'failed', 'expired', 'cancelled']);
const when = (s: number | null | undefined) => (s ? new Date(s * 1000).toISOString() : '');
const enc = encodeURIComponent;

export function registerFilesAndBatches(g: Command, auth: () => Record<string, string>): void {
  const api = <T>(method: string, path: string, body?: unknown, query?: Record<string, string | number | undefined>) => request<T>({ host: 'gateway', method, path, body, query, headers: auth() });

  async function upload(path: string, purpose: string, expiresAfter?: number): Promise<FileView> {
    if (!existsSync(path)) throw new UsageError(`cannot read ${path}: ENOENT`);
    const fields: Record<string, string> = { purpose, ...(expiresAfter !== undefined ? { 'expires_after[anchor]': 'created_at', 'expires_after[seconds]': String(expiresAfter) } : {}) };
    const res = await postForm('/v1/files', fields, [{ field: 'file', path }], auth());
    await check(res);
    return JSON.parse(await text(res)) as FileView;
  }

  async function download(id: string, out: string): Promise<void> {
    const res = await sendStream('GET', `/v1/files/${enc(id)}/content`, auth(), (req) => req.end());
    await check(res);
    if (out === '-') await pipeline(res, process.stdout);
    else await pipeline(res, createWriteStream(out));
  }

  const showFile = (f: FileView) =>
    printObject(
      [
        ['id', f.id],
        ['filename', f.filename],
        ['purpose', f.purpose],
        ['bytes', f.bytes],
        ['created', when(f.created_at)],
        ['expires', when(f.expires_at)],
      ],
      f,
    );

  const f = g.command('file').description('uploaded files (/v1/files): upload, list, get, content, rm');
  f.command('upload <path>')
    .description('upload a file (streamed from disk); prints its id')
    .option('--purpose <purpose>', 'batch, user_data, assistants, vision, fine-tune or evals', 'batch')
    .option('--expires-after <seconds>', 'delete it this long after upload (3600 to 2592000)', intOption('--expires-after'))
    .action(
      action(async (path: string, o: { purpose: string; expiresAfter?: number }) => {
        const v = await upload(path, o.purpose, o.expiresAfter);
        if (outputFormat() !== 'table') return printData(v);
        process.stdout.write(`${v.id}\n`);
      }),
    );
  f.command('list')
    .description('the files of this key, newest first')
    .option('--purpose <purpose>', 'only files with this purpose')
    .action(
      action(async (o: { purpose?: string }) => {
        const r = await api<{ data: FileView[] }>('GET', '/v1/files', undefined, { purpose: o.purpose });
        await printRows(
          r.data,
          [
            { header: 'id', get: (x) => x.id },
            { header: 'filename', get: (x) => x.filename },
            { header: 'purpose', get: (x) => x.purpose },
            { header: 'bytes', get: (x) => x.bytes },
            { header: 'created', get: (x) => when(x.created_at) },
          ],
          r,
        );
      }),
    );
  f.command('get <id>')
    .description("a file's metadata")
    .action(action(async (id: string) => showFile(await api<FileView>('GET', `/v1/files/${enc(id)}`))));
  f.command('content <id>')
    .description("a file's bytes, to standard output or --out")
    .option('--out <file>', 'write to this file', '-')
    .action(action(async (id: string, o: { out: string }) => download(id, o.out)));
  f.command('rm <id>')
    .description('delete a file')
    .action(
      action(async (id: string) => {
        const v = await api<{ id: string }>('DELETE', `/v1/files/${enc(id)}`);
        if (outputFormat() !== 'table') return printData(v);
        process.stdout.write(`deleted ${v.id}\n`);
      }),
    );

  const showBatch = (b: BatchView) =>
    printObject(
      [
        ['id', b.id],
        ['status', b.status],
        ['endpoint', b.endpoint],
        ['requests', `${b.request_counts.completed} completed, ${b.request_counts.failed} failed, of ${b.request_counts.total}`],
        ['input', b.input_file_id],
        ['output', b.output_file_id ?? ''],
        ['errors file', b.error_file_id ?? ''],
        ['created', when(b.created_at)],
        ...(b.errors ? ([['errors', b.errors.data.map((e) => e.message).join('; ')]] as [string, unknown][]) : []),
        ...(b.metadata ? ([['metadata', b.metadata]] as [string, unknown][]) : []),
      ],
      b,
    );

  const b = g.command('batch').description('batches (/v1/batches): create, list, get, wait, cancel, rm');
  b.command('create <input>')
    .description('start a batch from an uploaded file id, or from a local JSONL file (uploaded first)')
    .option('--endpoint <path>', '/v1/chat/completions, /v1/responses, /v1/embeddings or /v1/moderations', '/v1/chat/completions')
    .option('--metadata <key=value>', 'metadata (repeatable)', collect, [])
    .action(
      action(async (input: string, o: { endpoint: string; metadata: string[] }) => {
        const metadata: Record<string, string> = {};
        for (const kv of o.metadata) {
          const i = kv.indexOf('=');
          if (i <= 0) throw new UsageError(`--metadata must be key=value, got ${JSON.stringify(kv)}`);
          metadata[kv.slice(0, i)] = kv.slice(i + 1);
        }
        const fileId = /^file-/.test(input) && !existsSync(input) ? input : (await upload(input, 'batch')).id;
        const v = await api<BatchView>('POST', '/v1/batches', { input_file_id: fileId, endpoint: o.endpoint, completion_window: '24h', ...(o.metadata.length ? { metadata } : {}) });
        if (outputFormat() !== 'table') return printData(v);
        process.stdout.write(`${v.id}\n`);
      }),
    );
  b.command('list')
    .description('the batches of this key, newest first')
    .option('--limit <n>', 'at most this many (1-100)', intOption('--limit'), 20)
    .action(
      action(async (o: { limit: number }) => {
        const r = await api<{ data: BatchView[] }>('GET', '/v1/batches', undefined, { limit: o.limit });
        await printRows(
          r.data,
          [
            { header: 'id', get: (x) => x.id },
            { header: 'status', get: (x) => x.status },
            { header: 'endpoint', get: (x) => x.endpoint },
            { header: 'done', get: (x) => `${x.request_counts.completed + x.request_counts.failed}/${x.request_counts.total}` },
            { header: 'failed', get: (x) => x.request_counts.failed },
            { header: 'created', get: (x) => when(x.created_at) },
          ],
          r,
        );
      }),
    );
  b.command('get <id>')
    .description("a batch's status and counts")
    .action(action(async (id: string) => showBatch(await api<BatchView>('GET', `/v1/batches/${enc(id)}`))));
  b.command('wait <id>')
    .description('wait until the batch ends; --out and --errors save its output and error files')
    .option('--out <file>', 'write the output file here')
    .option('--errors <file>', 'write the error file here')
    .option('--interval <seconds>', 'polling interval', '1')
    .action(
      action(async (id: string, o: { out?: string; errors?: string; interval: string }) => {
        const every = Number(o.interval);
        if (!(every >= 0.1)) throw new UsageError('--interval must be a number of seconds >= 0.1');
        let v = await api<BatchView>('GET', `/v1/batches/${enc(id)}`);
        while (!ENDED.has(v.status)) {
          await new Promise((r) => setTimeout(r, every * 1000));
          v = await api<BatchView>('GET', `/v1/batches/${enc(id)}`);
        }
        if (o.out && v.output_file_id) await download(v.output_file_id, o.out);
        if (o.errors && v.error_file_id) await download(v.error_file_id, o.errors);
        await showBatch(v);
        if (v.status === 'failed') process.exitCode = 1;
      }),
    );
  b.command('cancel <id>')
    .description('cancel a batch that has not ended (lines in flight finish)')
    .action(action(async (id: string) => showBatch(await api<BatchView>('POST', `/v1/batches/${enc(id)}/cancel`))));
  b.command('rm <id>')
    .description('delete a batch that has ended (its files stay)')
    .action(
      action(async (id: string) => {
        const v = await api<{ id: string }>('DELETE', `/v1/batches/${enc(id)}`);
        if (outputFormat() !== 'table') return printData(v);
        process.stdout.write(`deleted ${v.id}\n`);
      }),
    );
}
