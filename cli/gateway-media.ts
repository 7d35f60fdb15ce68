/**
 * `ctl gateway image | speak | transcribe`: a quick try of the gateway's media routes from the
 * terminal (over the socket, or --url with --api-key). Binary answers are written to a file as they
 * arrive; uploads are sent as multipart forms straight from the file.
 */
import http from 'node:http';
import https from 'node:https';
import { createReadStream, createWriteStream, statSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { randomBytes } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import type { Command } from 'commander';
import { ApiError, errorMessage, socketPath, target, UnreachableError } from './client.js';
import { outputFormat, printData } from './output.js';
import { action, intOption, UsageError } from './run.js';

const HOST = 'gateway';

/** One request to the gateway; resolves with the response (a stream) once its headers arrived. */
export function sendStream(method: string, path: string, headers: Record<string, string | number>, body: (req: http.ClientRequest) => void): Promise<http.IncomingMessage> {
  const t = target();
  return new Promise((resolve, reject) => {
    let req: http.ClientRequest;
    if (/^https?:\/\//.test(t)) {
      const url = new URL(path.replace(/^\//, ''), t.endsWith('/') ? t : t + '/');
      req = (url.protocol === 'https:' ? https : http).request(url, { method, headers, rejectUnauthorized: process.env.CTL_INSECURE !== '1' }, resolve);
    } else {
      req = http.request({ socketPath: socketPath(), path, method, headers: { ...headers, Host: HOST } }, resolve);
    }
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (['ENOENT', 'ECONNREFUSED', 'EACCES'].includes(e.code ?? '')) reject(new UnreachableError(`cannot reach the ctl daemon at ${t}: ${e.code} (is \`ctl serve\` running?)`));
      else reject(e);
    });
    body(req);
  });
}

export async function text(res: Readable): Promise<string> {
  let s = '';
  for await (const c of res) s += (c as Buffer).toString('utf8');
  return s;
}

/** Throw the API's message for a >= 400 answer. */
export async function check(res: http.IncomingMessage): Promise<void> {
  if ((res.statusCode ?? 0) < 400) return;
  const raw = await text(res);
  let data: unknown = raw;
  try {
    data = JSON.parse(raw);
  } catch {
    /* text */
  }
  throw new ApiError(res.statusCode ?? 0, errorMessage(data, res.statusCode ?? 0), data);
}

function postJson(path: string, body: unknown, auth: Record<string, string>): Promise<http.IncomingMessage> {
  const payload = JSON.stringify(body);
  return sendStream('POST', path, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload), ...auth }, (req) => req.end(payload));
}

/** A multipart POST whose files are streamed from disk one after another (never read whole). */
export function postForm(path: string, fields: Record<string, string>, files: { field: string; path: string }[], auth: Record<string, string>): Promise<http.IncomingMessage> {
  const sizes = files.map((f) => {
    try {
      return statSync(f.path).size;
    } catch (e) {
      throw new UsageError(`cannot read ${f.path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  });
  const boundary = `ctl${randomBytes(12).toString('hex')}`;
  const head = Buffer.from(Object.entries(fields).map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`).join(''));
  const fileHeads = files.map((f, i) =>
    Buffer.from(`${i > 0 ? '\r\n' : ''}--${boundary}\r\nContent-Disposition: form-data; name="${f.field}"; filename="${basename(f.path).replace(/"/g, '')}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const length = head.length + fileHeads.reduce((n, b) => n + b.length, 0) + sizes.reduce((n, x) => n + x, 0) + tail.length;
  return sendStream('POST', path, { 'Content-Type': `multipart/form-data; boundary=${boundary}`, 'Content-Length': length, ...auth }, (req) => {
    req.write(head);
    const next = (i: number) => {
      if (i === files.length) return void req.end(tail);
      req.write(fileHeads[i]);
      const rs = createReadStream(files[i]!.path);
      rs.on('error', (e) => req.destroy(e));
      rs.on('end', () => next(i + 1));
      rs.pipe(req, { end: false });
    };
    next(0);
  });
}

export function registerMedia(g: Command, auth: () => Record<string, string>): void {
  g.command('image <model> <prompt>')
    .description('generate images (POST /v1/images/generations), or edit them with --edit (POST /v1/images/edits); --out writes them as files, else their URLs are printed')
    .option('-n, --count <n>', 'how many images (1-10)', intOption('--count'), 1)
    .option('--size <WxH>', 'image size, e.g. 1024x1024')
    .option('--edit <file>', 'an image to edit (PNG, WebP or JPEG; repeat for several)', (v: string, prev: string[] = []) => [...prev, v])
    .option('--mask <file>', 'with --edit: a PNG mask whose transparent areas are edited')
    .option('--out <file>', 'write the image to this file (several: file-1.png, file-2.png, ...)')
    .action(
      action(async (model: string, prompt: string, o: { count: number; size?: string; edit?: string[]; mask?: string; out?: string }) => {
        if (o.mask && !o.edit) throw new UsageError('--mask needs --edit');
        const body: Record<string, unknown> = { model, prompt, n: o.count, ...(o.size ? { size: o.size } : {}), ...(o.out ? { response_format: 'b64_json' } : {}) };
        const res = o.edit
          ? await postForm(
              '/v1/images/edits',
              Object.fromEntries(Object.entries(body).map(([k, v]) => [k, String(v)])),
              [...o.edit.map((path) => ({ field: o.edit!.length > 1 ? 'image[]' : 'image', path })), ...(o.mask ? [{ field: 'mask', path: o.mask }] : [])],
              auth(),
            )
          : await postJson('/v1/images/generations', body, auth());
        await check(res);
        const answer = JSON.parse(await text(res)) as { data: { url?: string; b64_json?: string }[] };
        if (outputFormat() !== 'table') return printData(answer);
        answer.data.forEach((d, i) => {
          if (o.out && d.b64_json) {
            const file = answer.data.length === 1 ? o.out : o.out.replace(/(\.[^./]+)?$/, (ext) => `-${i + 1}${ext}`);
            writeFileSync(file, Buffer.from(d.b64_json, 'base64'));
            process.stdout.write(`${file}\n`);
          } else process.stdout.write(`${d.url ?? '(no url)'}\n`);
        });
      }),
    );

  g.command('speak <model> <text>')
    .description('text to speech (POST /v1/audio/speech): the audio is written to --out as it arrives')
    .requiredOption('--out <file>', 'audio file to write ("-" for stdout)')
    .option('--voice <name>', 'voice', 'alloy')
    .option('--format <fmt>', 'mp3, opus, aac, flac, wav or pcm', 'mp3')
    .action(
      action(async (model: string, input: string, o: { out: string; voice: string; format: string }) => {
        const res = await postJson('/v1/audio/speech', { model, input, voice: o.voice, response_format: o.format }, auth());
        await check(res);
        if (o.out === '-') {
          if (process.stdout.isTTY) throw new UsageError('refusing to write audio to a terminal: use --out FILE or a pipe');
          await pipeline(res, process.stdout);
          return;
        }
        await pipeline(res, createWriteStream(o.out));
        process.stderr.write(`${o.out} (${statSync(o.out).size} bytes, ${res.headers['content-type'] ?? 'audio'})\n`);
      }),
    );

  g.command('transcribe <model> <file>')
    .description('speech to text (POST /v1/audio/transcriptions): the file is uploaded as it is read')
    .option('--language <code>', 'language of the audio (ISO-639-1)')
    .option('--format <fmt>', 'json, text, srt, vtt or verbose_json', 'text')
    .action(
      action(async (model: string, file: string, o: { language?: string; format: string }) => {
        const res = await postForm('/v1/audio/transcriptions', { model, response_format: o.format, ...(o.language ? { language: o.language } : {}) }, [{ field: 'file', path: file }], auth());
        await check(res);
        const body = await text(res);
        if (outputFormat() !== 'table' || o.format.includes('json')) {
          try {
            return printData(JSON.parse(body));
          } catch {
            /* not JSON */
          }
        }
        process.stdout.write(body.endsWith('\n') ? body : `${body}\n`);
      }),
    );
}
