/**
 * The gateway's media pass-through: speech (the audio streamed back) and transcription (the upload
 * spooled to disk, then sent on) against the same calls made directly to a loopback upstream, as
 * added latency at the median; and the daemon's resident memory while 25, 100 and 400 MiB audio uploads
 * pass through (streamed, never held whole: the growth does not follow the size), beside a bare Node
 * spool-and-send proxy (upload-floor.ts) under the same uploads.
 */
import http from 'node:http';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { boundAddresses, fmt, listeningPort, percentile, report, section, startBenchDaemon } from './util.js';

const SPEECH_BYTES = 256 * 1024;
const SMALL_UPLOAD = 100 * 1024;
const BIG_UPLOAD = 100 * 1024 * 1024;
const ROUNDS = 200;

/** An OpenAI-shaped upstream: speech answers SPEECH_BYTES of audio in 64 KiB writes; transcription reads and counts the upload. */
function startUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const audio = Buffer.alloc(SPEECH_BYTES, 7);
  const server = http.createServer((req, res) => {
    let size = 0;
    req.on('data', (c: Buffer) => (size += c.length));
    req.on('end', () => {
      if (req.url?.endsWith('/audio/speech')) {
        res.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': audio.length });
        for (let i = 0; i < audio.length; i += 65536) res.write(audio.subarray(i, i + 65536));
        res.end();
      } else if (req.url?.endsWith('/audio/transcriptions')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ text: `${size} bytes heard` }));
      } else res.writeHead(404).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, close: () => new Promise((r) => server.close(() => r())) }),
    ),
  );
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function speech(base: string, model: string): Promise<number> {
  const body = JSON.stringify({ model, input: 'hello from the bench', voice: 'alloy' });
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}/audio/speech`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      let n = 0;
      res.on('data', (c: Buffer) => (n += c.length));
      res.on('end', () => (res.statusCode === 200 && n === SPEECH_BYTES ? resolve(performance.now() - t0) : reject(new Error(`speech: ${res.statusCode}, ${n} bytes`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A multipart upload of `size` bytes, generated as it is sent (the client holds 1 MiB at most). */
function transcribe(base: string, model: string, size: number): Promise<number> {
  const boundary = 'benchboundary7d2c';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\n${model}\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="talk.wav"\r\nContent-Type: audio/wav\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const chunk = Buffer.alloc(1024 * 1024, 1);
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${base}/audio/transcriptions`,
      { method: 'POST', agent, headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': head.length + size + tail.length } },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c));
        res.on('end', () => (res.statusCode === 200 && Number(/(\d+) bytes heard/.exec(text)?.[1]) > size ? resolve(performance.now() - t0) : reject(new Error(`transcription: ${res.statusCode} ${text.slice(0, 200)}`))));
      },
    );
    req.on('error', reject);
    req.write(head);
    let sent = 0;
    const pump = () => {
      while (sent < size) {
        const n = Math.min(chunk.length, size - sent);
        sent += n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return void req.once('drain', pump);
      }
      req.end(tail);
    };
    pump();
  });
}

const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

async function series(n: number, call: () => Promise<number>): Promise<number[]> {
  for (let i = 0; i < 20; i++) await call(); // warm-up
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await call());
  return out;
}

/** The bare spool-and-send Node proxy (upload-floor.ts) in front of the upstream's transcription route. */
async function startUploadFloor(upstream: string): Promise<{ base: string; pid: number; stop(): Promise<void> }> {
  const script = join(dirname(fileURLToPath(import.meta.url)), 'upload-floor.js');
  const child = spawn(process.execPath, [script, `${upstream}/audio/transcriptions`], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await listeningPort(child, (code) => `upload floor exited with ${code}`);
  return {
    base: `http://127.0.0.1:${port}/v1`,
    pid: child.pid!,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
    },
  };
}

/**
 * Peak RSS growth of `pid` while uploads of `sizes` pass through `base` one after another, the first
 * after a 100 KiB warm-up and a pause (so start-up garbage is gone): growth per upload.
 */
async function uploadGrowth(pid: number, base: string, model: string, sizes: number[]): Promise<number[]> {
  await transcribe(base, model, SMALL_UPLOAD);
  await new Promise((r) => setTimeout(r, 300));
  const out: number[] = [];
  for (const size of sizes) {
    const before = rssOf(pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 5);
    await transcribe(base, model, size).finally(() => clearInterval(sampler));
    out.push(Math.max(peak, rssOf(pid)) - before);
  }
  return out;
}

const MEDIA_CONFIG = (upstream: string) => ({
  'ctl.yaml': `gateway:\n  max_audio_bytes: ${4 * BIG_UPLOAD + 1024 * 1024}\n`,
  'gateway.yaml': `providers:\n  - {id: up, kind: openai, base_url: "${upstream}", api_key: k, models: [{id: tts, type: speech}, {id: stt, type: transcription}]}\n`,
});

export async function runGatewayMediaBench(): Promise<void> {
  section('gateway media pass-through: speech and transcription, direct vs through ctl');
  const up = await startUpstream();
  const d = await startBenchDaemon(MEDIA_CONFIG(up.url));
  try {
    const gw = `http://${(await boundAddresses(d.socket)).servers.gateway!.bound_address}/v1`;
    const direct = await series(ROUNDS, () => speech(up.url, 'tts'));
    const through = await series(ROUNDS, () => speech(gw, 'up/tts'));
    report(`speech (${SPEECH_BYTES / 1024} KiB audio) p50, direct / through ctl`, `${fmt(percentile(direct, 50))} / ${fmt(percentile(through, 50))}`);
    report('speech added latency p50', fmt(percentile(through, 50) - percentile(direct, 50)));
    const tDirect = await series(ROUNDS / 2, () => transcribe(up.url, 'stt', SMALL_UPLOAD));
    const tThrough = await series(ROUNDS / 2, () => transcribe(gw, 'up/stt', SMALL_UPLOAD));
    report(`transcription (${SMALL_UPLOAD / 1024} KiB upload) p50, direct / through ctl`, `${fmt(percentile(tDirect, 50))} / ${fmt(percentile(tThrough, 50))}`);
    report('transcription added latency p50', fmt(percentile(tThrough, 50) - percentile(tDirect, 50)));
    const bigDirect = await transcribe(up.url, 'stt', BIG_UPLOAD);
    const bigThrough = await transcribe(gw, 'up/stt', BIG_UPLOAD);
    report('100 MiB upload, direct / through ctl', `${fmt(bigDirect, 0)} / ${fmt(bigThrough, 0)}`);
  } finally {
    await d.stop();
  }

  // Memory: if an upload were held, growth would follow its size. Each size goes through a fresh
  // daemon (the first big upload is the one that grows a process at all), then a second 100 MiB
  // upload shows the daemon that has served uploads before. The bare spool-and-send proxy is what
  // Node itself costs: its growth is the young-generation buffer garbage V8 lets pile up between
  // collections, which no code above node:http decides.
  try {
    const floor = await startUploadFloor(up.url);
    const [floorFirst, floorAgain] = await uploadGrowth(floor.pid, floor.base, 'stt', [BIG_UPLOAD, BIG_UPLOAD]).finally(() => floor.stop());
    const firsts: number[] = [];
    let again = 0;
    for (const size of [BIG_UPLOAD / 4, BIG_UPLOAD, 4 * BIG_UPLOAD]) {
      const fresh = await startBenchDaemon(MEDIA_CONFIG(up.url));
      try {
        const gw = `http://${(await boundAddresses(fresh.socket)).servers.gateway!.bound_address}/v1`;
        const growth = await uploadGrowth(fresh.child.pid!, gw, 'up/stt', size === BIG_UPLOAD ? [size, size] : [size]);
        firsts.push(growth[0]!);
        if (growth[1] !== undefined) again = growth[1];
      } finally {
        await fresh.stop();
      }
    }
    const mib = (n: number) => `${n.toFixed(1)} MiB`;
    report('RSS growth, first upload on a fresh daemon: 25 / 100 / 400 MiB', firsts.map(mib).join(' / '), 'flat: streamed, not held');
    report('RSS growth, first 100 MiB upload, bare Node spool-and-send', mib(floorFirst!), 'the node:http floor');
    report('RSS growth, a second 100 MiB upload: ctl / bare Node', `${mib(again)} / ${mib(floorAgain!)}`, 'goal < 16 MiB');
  } finally {
    agent.destroy();
    await up.close();
  }
}
