/** The gateway's audio upload route against every hostile multipart body: a 4xx each time, nothing left on disk, and the daemon lives. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { runMultipartAbuse } from '../helpers/multipart-abuse.js';

const MAX = 65536;

describe('gateway transcription upload under hostile multipart bodies', () => {
  let d: TestDaemon;
  beforeAll(async () => {
    // A small limit: the over-limit cases stay within what the daemon reads and discards to deliver its 413.
    d = await startDaemon({ ctlYaml: { gateway: { max_audio_bytes: MAX } } });
  });
  afterAll(async () => {
    await d?.cleanup();
  });

  it('answers every case with a 4xx (or a close for a client that left) and keeps serving every API', async () => {
    const base = new URL(await d.baseUrl('gateway'));
    const results = await runMultipartAbuse({ host: base.hostname, port: Number(base.port), path: '/v1/audio/transcriptions', fileField: 'file', maxBytes: MAX });
    for (const r of results) {
      if (r.name === 'client gone mid-body') continue;
      expect(r.status, r.name).toBeGreaterThanOrEqual(400);
      expect(r.status, r.name).toBeLessThan(500);
    }
    expect(results.find((r) => r.name === 'file over the limit, chunked (no length)')?.status).toBe(413);
    expect(results.find((r) => r.name === 'file over the limit, declared length')?.status).toBe(413);
    expect(d.child.exitCode).toBeNull();
    expect((await d.request('core', 'GET', '/core/1.0/ready')).status).toBe(200);
    expect((await d.request('gateway', 'GET', '/v1/models')).status).toBe(200);
    // The last aborted upload is cleaned up once the daemon sees the socket close (moments later,
    // longer on a loaded machine); then nothing is left.
    const tmp = join(d.dir, 'uploads', 'gateway', 'tmp');
    const left = () => (existsSync(tmp) ? readdirSync(tmp) : []);
    for (let i = 0; i < 100 && left().length > 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(left()).toEqual([]);
  }, 60_000);
});
