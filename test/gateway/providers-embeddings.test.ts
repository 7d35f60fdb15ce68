import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Egress } from '../../src/egress/index.js';
import { HttpError } from '../../src/http/errors.js';
import { assertEmbeddingSupport, base64DecodedSize, parseEmbeddingsRequest, renderEmbeddingsResponse } from '../../src/gateway/embeddings.js';
import { callEmbeddings, modelCapabilities, modelSpec } from '../../src/gateway/providers/index.js';
import { fetchMedia } from '../../src/gateway/providers/media.js';
import { isPublicAddress } from '../../src/egress/public-address.js';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';

function status(fn: () => unknown): { status: number; message: string } {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(HttpError);
    return e as HttpError;
  }
  throw new Error('expected an error');
}

const b64 = (n: number) => Buffer.alloc(n, 1).toString('base64');

describe('embeddings request parsing', () => {
  it('accepts a string, a token list, arrays of each, and passes extension fields through', () => {
    expect(parseEmbeddingsRequest({ model: 'p/e', input: 'hi' }).input).toEqual({ kind: 'strings', values: ['hi'], single: true });
    expect(parseEmbeddingsRequest({ model: 'p/e', input: ['a', 'b'] }).input).toEqual({ kind: 'strings', values: ['a', 'b'], single: false });
    expect(parseEmbeddingsRequest({ model: 'p/e', input: [1, 2, 3] }).input).toEqual({ kind: 'tokens', values: [[1, 2, 3]], single: true });
    expect(parseEmbeddingsRequest({ model: 'p/e', input: [[1], [2, 3]] }).input).toEqual({ kind: 'tokens', values: [[1], [2, 3]], single: false });
    const r = parseEmbeddingsRequest({ model: 'p/e', input: 'x', dimensions: 64, encoding_format: 'base64', user: 'u', input_type: 'query' });
    expect(r).toMatchObject({ dimensions: 64, encodingFormat: 'base64', extra: { user: 'u', input_type: 'query' } });
  });

  it('accepts structured items and rejects bad ones', () => {
    const r = parseEmbeddingsRequest({
      model: 'p/e',
      input: [
        { type: 'text', text: 'caption' },
        { type: 'image', source: { type: 'base64', data: b64(10), media_type: 'image/png' } },
        { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } },
      ],
    });
    expect(r.input.kind).toBe('items');
    expect(r.extra).toBeUndefined();
    expect(status(() => parseEmbeddingsRequest({ model: 'm', input: [{ type: 'image', source: { type: 'url', url: 'http://example.com/a.png' } }] })).message).toMatch(/https/);
    expect(status(() => parseEmbeddingsRequest({ model: 'm', input: [{ type: 'smell', text: 'x' }] })).message).toMatch(/type/);
    expect(status(() => parseEmbeddingsRequest({ model: 'm', input: ['a', { type: 'text', text: 'b' }] })).message).toMatch(/mixing/);
    expect(status(() => parseEmbeddingsRequest({ model: 'm', input: [{ type: 'image', source: { type: 'base64', data: '!!!', media_type: 'image/png' } }] })).message).toMatch(/base64/);
    expect(status(() => parseEmbeddingsRequest({ model: 'm', input: [] })).message).toMatch(/empty/);
    expect(status(() => parseEmbeddingsRequest({ input: 'x' })).message).toMatch(/model/);
    expect(status(() => parseEmbeddingsRequest({ model: 'm', input: 'x', dimensions: 0 })).message).toMatch(/dimensions/);
  });

  it('enforces the seed limits: 32 items, 8 MiB per item, 16 MiB per request', () => {
    const items = Array.from({ length: 33 }, () => ({ type: 'text', text: 'x' }));
    expect(status(() => parseEmbeddingsRequest({ model: 'm', input: items })).message).toMatch(/at most 32/);
    expect(parseEmbeddingsRequest({ model: 'm', input: items.slice(0, 32) }).input.kind).toBe('items');
    const big = { type: 'image', source: { type: 'base64', data: b64(8 * 1024 * 1024 + 3), media_type: 'image/png' } };
    expect(status(() => parseEmbeddingsRequest({ model: 'm', input: [big] })).message).toMatch(/8 MiB/);
    const seven = { type: 'image', source: { type: 'base64', data: b64(7 * 1024 * 1024), media_type: 'image/png' } };
    expect(status(() => parseEmbeddingsRequest({ model: 'm', input: [seven, seven, seven] })).message).toMatch(/16 MiB/);
    expect(base64DecodedSize(b64(10))).toBe(10);
  });

  it('structured items need a model that declares its modalities', () => {
    const conn = { id: 'p', kind: 'openai' as const, models: [{ id: 'mm', type: 'embedding' as const, embeddingModalities: ['text', 'image'] as ('text' | 'image')[] }] };
    const items = parseEmbeddingsRequest({ model: 'mm', input: [{ type: 'image', source: { type: 'url', url: 'https://x.test/a.png' } }] });
    assertEmbeddingSupport(items, modelCapabilities(conn, 'mm'));
    expect(status(() => assertEmbeddingSupport(items, modelCapabilities(conn, 'text-embedding-3-small'))).message).toMatch(/does not declare/);
    const audio = parseEmbeddingsRequest({ model: 'mm', input: [{ type: 'audio', source: { type: 'url', url: 'https://x.test/a.mp3' } }] });
    expect(status(() => assertEmbeddingSupport(audio, modelCapabilities(conn, 'mm'))).message).toMatch(/does not embed audio/);
    // Structured items to a model that does not embed: refused.
    expect(status(() => assertEmbeddingSupport(items, modelCapabilities(conn, 'gpt-4o'))).message).toMatch(/not an embedding model/);
  });

  it('plain strings and token lists go to a model without a declared type, whatever its id suggests (seed rule 3)', () => {
    const conn = { id: 'p', kind: 'openai' as const, models: [{ id: 'chatty', type: 'chat' as const }, 'my-finetune'] };
    const plain = parseEmbeddingsRequest({ model: 'x', input: 'a' });
    const tokens = parseEmbeddingsRequest({ model: 'x', input: [1, 2, 3] });
    // gpt-4o looks like a chat model, and my-finetune is listed without a type: both forwarded.
    assertEmbeddingSupport(plain, modelCapabilities(conn, 'gpt-4o'), 'p/gpt-4o', modelSpec(conn, 'gpt-4o')?.type);
    assertEmbeddingSupport(tokens, modelCapabilities(conn, 'my-finetune'), 'p/my-finetune', modelSpec(conn, 'my-finetune')?.type);
    // A model declared as chat is refused, saying so.
    expect(status(() => assertEmbeddingSupport(plain, modelCapabilities(conn, 'chatty'), 'p/chatty', modelSpec(conn, 'chatty')?.type)).message).toBe('model p/chatty is declared as a chat model, not an embedding model');
  });

  it('renders float and base64 vectors', () => {
    const req = parseEmbeddingsRequest({ model: 'p/e', input: ['a'], encoding_format: 'base64' });
    const out = renderEmbeddingsResponse({ model: 'e', vectors: [[0.5, -1]], usage: { inputTokens: 2 } }, req) as any;
    expect(out.model).toBe('p/e');
    const buf = Buffer.from(out.data[0].embedding, 'base64');
    expect(Array.from(new Float32Array(buf.buffer, buf.byteOffset, 2))).toEqual([0.5, -1]);
    expect(out.usage).toEqual({ prompt_tokens: 2, total_tokens: 2 });
  });
});

describe('media fetching under the SSRF policy', () => {
  let server: Server;
  let port = 0;
  let mock: MockUpstream;
  let egress: Egress;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/img.png') {
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end(Buffer.from([137, 80, 78, 71]));
      } else if (req.url === '/redirect-public') {
        res.writeHead(302, { location: 'http://203.0.113.5/img.png' });
        res.end();
      } else if (req.url === '/redirect-private') {
        res.writeHead(302, { location: `http://127.0.0.1:${port}/img.png` });
        res.end();
      } else if (req.url === '/big') {
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end(Buffer.alloc(2048));
      } else {
        res.writeHead(404);
        res.end();
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
    egress = new Egress({ loopbackOnly: true, addressMap: { '203.0.113.5:80': `127.0.0.1:${port}` } });
    mock = await startLlmUpstream();
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await mock.close();
    await egress.close();
  });

  it('classifies addresses', () => {
    for (const ip of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1']) expect(isPublicAddress(ip)).toBe(false);
    for (const ip of ['8.8.8.8', '203.0.113.5', '2001:4860:4860::8888']) expect(isPublicAddress(ip)).toBe(true);
  });

  it('fetches a public address (mapped to a loopback fake), follows checked redirects, refuses private ones', async () => {
    const m = await fetchMedia('http://203.0.113.5/img.png', egress, { allowHttp: true });
    expect(m.mediaType).toBe('image/png');
    expect([...m.data]).toEqual([137, 80, 78, 71]);
    expect((await fetchMedia('http://203.0.113.5/redirect-public', egress, { allowHttp: true })).data.length).toBe(4);
    const refused = (why: RegExp) => ({ kind: 'invalid', message: expect.stringMatching(new RegExp(`^media URL is not allowed or not reachable: ${why.source}`)) });
    await expect(fetchMedia('http://203.0.113.5/redirect-private', egress, { allowHttp: true })).rejects.toMatchObject(refused(/private address \S+ is not in egress\.allow/));
    await expect(fetchMedia('http://203.0.113.5/img.png', egress)).rejects.toMatchObject(refused(/scheme http: is not https$/));
    await expect(fetchMedia(`https://127.0.0.1:${port}/img.png`, egress)).rejects.toMatchObject({ kind: 'invalid' });
    await expect(fetchMedia('https://localhost/img.png', egress)).rejects.toMatchObject({ kind: 'invalid' });
    await expect(fetchMedia('http://203.0.113.5/big', egress, { allowHttp: true, maxBytes: 1000 })).rejects.toMatchObject({ kind: 'invalid', message: expect.stringMatching(/larger/) });
    await expect(fetchMedia('http://203.0.113.5/missing', egress, { allowHttp: true })).rejects.toMatchObject({ kind: 'invalid', message: expect.stringMatching(/404/) });
    await expect(fetchMedia('http://user:pw@203.0.113.5/img.png', egress, { allowHttp: true })).rejects.toMatchObject({ kind: 'invalid' });
  });

  it('providers receive inline data, never the original URL', async () => {
    await callEmbeddings(
      { id: 'o', kind: 'openai', baseUrl: mock.baseUrl('openai') },
      { id: 'a' },
      { model: 'mm', input: { kind: 'items', values: [{ type: 'image', source: { type: 'url', url: 'http://203.0.113.5/img.png' } }] } },
      { egress, media: { allowHttp: true } },
    );
    const sent = JSON.stringify(mock.requests[0]!.body);
    expect(sent).not.toContain('203.0.113.5');
    expect(sent).toContain('data:image/png;base64,iVBORw==');
  });
});
