/**
 * Hostile multipart uploads for any upload route: truncated, mis-bounded, oversized (declared and
 * chunked), too many parts, a huge part header, garbage, and a client that gives up mid-body. Each
 * case is written byte for byte on a raw socket, so what reaches the server is exactly what a broken
 * or malicious client sends. Upload routes of every API run it (pipeline images today; gateway files
 * and audio next): every case must be answered with a 4xx, and the daemon must still answer after.
 */
import { connect } from 'node:net';

export interface MultipartTarget {
  /** Loopback host and port of the listener. */
  host: string;
  port: number;
  path: string;
  /** The route's file field (e.g. `file`). */
  fileField: string;
  /** The route's limit for one file, in bytes. */
  maxBytes: number;
  /** Extra request headers (auth). */
  headers?: Record<string, string>;
}

export interface AbuseResult {
  name: string;
  /** The HTTP status answered, or `closed` when the server closed without an answer. */
  status: number | 'closed';
}

const CRLF = '\r\n';
const BOUNDARY = 'ctlAbuseBoundary7MA4YWxkTrZu0gW';

function part(field: string, filename: string, type: string, data: Buffer): Buffer {
  const head = `--${BOUNDARY}${CRLF}Content-Disposition: form-data; name="${field}"; filename="${filename}"${CRLF}Content-Type: ${type}${CRLF}${CRLF}`;
  return Buffer.concat([Buffer.from(head), data, Buffer.from(CRLF)]);
}

const CLOSE = Buffer.from(`--${BOUNDARY}--${CRLF}`);
const PNG_HEAD = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Send `head` then each chunk of `body`; resolve with the status line's code (or `closed`). */
function exchange(t: MultipartTarget, head: string, body: Iterable<Buffer>, opts: { abortAfter?: number; timeoutMs?: number } = {}): Promise<number | 'closed'> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: t.host, port: t.port });
    let reply = '';
    let done = false;
    const finish = (v: number | 'closed') => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(v);
    };
    const timer = setTimeout(() => {
      done = true;
      socket.destroy();
      reject(new Error(`no answer within ${opts.timeoutMs ?? 10_000} ms`));
    }, opts.timeoutMs ?? 10_000);
    socket.on('data', (d: Buffer) => {
      reply += d.toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(reply);
      if (m) finish(Number(m[1]));
    });
    socket.on('error', () => finish('closed'));
    socket.on('close', () => finish('closed'));
    socket.on('connect', async () => {
      socket.write(head);
      let sent = 0;
      for (const chunk of body) {
        if (done || socket.destroyed) return;
        if (opts.abortAfter !== undefined && sent + chunk.length > opts.abortAfter) {
          socket.write(chunk.subarray(0, opts.abortAfter - sent));
          setTimeout(() => finish('closed'), 50);
          return;
        }
        sent += chunk.length;
        // Respect back-pressure so a refused upload is not buffered in this process either.
        if (!socket.write(chunk)) await new Promise((r) => socket.once('drain', r));
      }
    });
  });
}

function headers(t: MultipartTarget, type: string, length: number | 'chunked'): string {
  const lines = [`POST ${t.path} HTTP/1.1`, `Host: ${t.host}:${t.port}`, `Content-Type: ${type}`, 'Connection: close'];
  lines.push(length === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${length}`);
  for (const [k, v] of Object.entries(t.headers ?? {})) lines.push(`${k}: ${v}`);
  return lines.join(CRLF) + CRLF + CRLF;
}

function* chunked(total: number, first: Buffer, chunk = 64 * 1024): Generator<Buffer> {
  const frame = (b: Buffer) => Buffer.concat([Buffer.from(b.length.toString(16) + CRLF), b, Buffer.from(CRLF)]);
  yield frame(first);
  const zeros = Buffer.alloc(chunk);
  for (let sent = 0; sent < total; sent += chunk) yield frame(zeros);
  yield Buffer.from(`0${CRLF}${CRLF}`);
}

/** Run every hostile case against the route, one after another. */
export async function runMultipartAbuse(t: MultipartTarget): Promise<AbuseResult[]> {
  const type = `multipart/form-data; boundary=${BOUNDARY}`;
  const image = part(t.fileField, 'x.png', 'image/png', Buffer.concat([PNG_HEAD, Buffer.alloc(1024)]));
  const results: AbuseResult[] = [];
  const run = async (name: string, p: Promise<number | 'closed'>) => results.push({ name, status: await p });

  // The body ends inside the file, before any closing boundary (busboy: "Unexpected end of form").
  const truncated = image.subarray(0, image.length - 200);
  await run('truncated inside the file', exchange(t, headers(t, type, truncated.length), [truncated]));
  await run('no closing boundary', exchange(t, headers(t, type, image.length), [image]));
  await run('chunked, ends inside the file', exchange(t, headers(t, type, 'chunked'), [Buffer.from(`${truncated.length.toString(16)}${CRLF}`), truncated, Buffer.from(`${CRLF}0${CRLF}${CRLF}`)]));
  const body = Buffer.concat([image, CLOSE]);
  await run('boundary differs from the header', exchange(t, headers(t, 'multipart/form-data; boundary=somethingElse', body.length), [body]));
  await run('no boundary parameter', exchange(t, headers(t, 'multipart/form-data', body.length), [body]));
  await run('garbage body', exchange(t, headers(t, type, 4096), [Buffer.alloc(4096, 0x41)]));
  const huge = part(t.fileField, 'x.png', 'image/png', Buffer.concat([PNG_HEAD, Buffer.alloc(t.maxBytes * 2)]));
  await run('file over the limit, declared length', exchange(t, headers(t, type, huge.length + CLOSE.length), [huge, CLOSE]));
  const fileHead = Buffer.from(`--${BOUNDARY}${CRLF}Content-Disposition: form-data; name="${t.fileField}"; filename="x.png"${CRLF}Content-Type: image/png${CRLF}${CRLF}`);
  await run('file over the limit, chunked (no length)', exchange(t, headers(t, type, 'chunked'), chunked(t.maxBytes * 4, Buffer.concat([fileHead, PNG_HEAD]))));
  const many = Buffer.concat([...Array.from({ length: 2000 }, (_, i) => Buffer.from(`--${BOUNDARY}${CRLF}Content-Disposition: form-data; name="f${i}"${CRLF}${CRLF}v${CRLF}`)), image, CLOSE]);
  await run('2,000 parts', exchange(t, headers(t, type, many.length), [many]));
  const bigHeader = Buffer.concat([Buffer.from(`--${BOUNDARY}${CRLF}Content-Disposition: form-data; name="${t.fileField}"; filename="${'a'.repeat(200_000)}.png"${CRLF}${CRLF}`), PNG_HEAD, Buffer.from(CRLF), CLOSE]);
  await run('200 KB part header', exchange(t, headers(t, type, bigHeader.length), [bigHeader]));
  // A client that gives up half-way: nothing to answer, nothing may break.
  await run('client gone mid-body', exchange(t, headers(t, type, body.length), [body], { abortAfter: Math.floor(body.length / 2) }));
  return results;
}
