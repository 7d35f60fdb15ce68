/** `ctl gateway image | speak | transcribe` against a daemon whose gateway points at the loopback mock. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { speechBytes, startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

let mock: MockUpstream;
let d: TestDaemon;
const dir = mkdtempSync(join(tmpdir(), 'ctl-cli-media-'));

beforeAll(async () => {
  mock = await startLlmUpstream();
  d = await startDaemon({
    files: {
      'gateway.yaml': `providers:\n  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: k, models: [{id: img, type: image}, {id: tts, type: speech}, {id: stt, type: transcription}]}\n`,
    },
  });
}, 60_000);
afterAll(async () => {
  await d?.cleanup();
  await mock?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('ctl gateway media commands', () => {
  it('image writes the generated images to files, or prints their URLs', async () => {
    const urls = await d.cli(['gateway', 'image', 'oa/img', 'a cat', '-n', '2']);
    expect(urls.code, urls.stderr).toBe(0);
    expect(urls.stdout).toBe('https://img.mock/0.png\nhttps://img.mock/1.png\n');
    const out = join(dir, 'cat.png');
    const files = await d.cli(['gateway', 'image', 'oa/img', 'a cat', '-n', '2', '--out', out]);
    expect(files.stdout).toBe(`${join(dir, 'cat-1.png')}\n${join(dir, 'cat-2.png')}\n`);
    expect(readFileSync(join(dir, 'cat-2.png'), 'utf8')).toBe('png-1-a cat');
  });

  it('image --edit uploads the images (and --mask) to /v1/images/edits', async () => {
    const a = join(dir, 'a.png');
    const b = join(dir, 'b.png');
    const m = join(dir, 'm.png');
    writeFileSync(a, 'PNG' + 'a'.repeat(70_000));
    writeFileSync(b, 'PNGb');
    writeFileSync(m, 'PNGm');
    const one = await d.cli(['gateway', 'image', 'oa/img', 'add a hat', '--edit', a, '--mask', m, '-o', 'json']);
    expect(one.code, one.stderr).toBe(0);
    expect(JSON.parse(one.stdout).data[0].revised_prompt).toBe('add a hat (1 image, masked)');
    expect(mock.lastForm!.files!.map((f) => [f.field, f.name, f.size])).toEqual([
      ['image', 'a.png', 70_003],
      ['mask', 'm.png', 4],
    ]);
    const two = await d.cli(['gateway', 'image', 'oa/img', 'merge', '--edit', a, '--edit', b]);
    expect(two.stdout).toBe('https://img.mock/edit-0.png\n');
    expect(mock.lastForm!.files!.map((f) => f.field)).toEqual(['image[]', 'image[]']);
    const maskOnly = await d.cli(['gateway', 'image', 'oa/img', 'x', '--mask', m]);
    expect(maskOnly.code).toBe(2);
    expect(maskOnly.stderr).toMatch(/--mask needs --edit/);
  });

  it('speak writes the audio bytes to --out; transcribe uploads a file and prints the text', async () => {
    const out = join(dir, 'hello.mp3');
    const s = await d.cli(['gateway', 'speak', 'oa/tts', 'hello there', '--out', out]);
    expect(s.code, s.stderr).toBe(0);
    expect(readFileSync(out).equals(speechBytes('hello there'))).toBe(true);
    const wav = join(dir, 'talk.wav');
    writeFileSync(wav, 'RIFF' + 'y'.repeat(50_000));
    const t = await d.cli(['gateway', 'transcribe', 'oa/stt', wav, '--language', 'de']);
    expect(t.code, t.stderr).toBe(0);
    expect(t.stdout).toBe('transcript of talk.wav (50004 bytes) by stt in de\n');
    const missing = await d.cli(['gateway', 'transcribe', 'oa/stt', join(dir, 'nope.wav')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read .*nope\.wav: ENOENT/);
    const bad = await d.cli(['gateway', 'speak', 'oa/img', 'x', '--out', join(dir, 'x.mp3')]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe('Error: model oa/img cannot serve /v1/audio/speech: it is declared as an image model\n');
  });
});
