import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import { reply, toJson } from '../../src/nodes/envelope.js';
import { startHarness, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

function raw(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<{ status: number; json: any; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${h.url}${path}`, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: any;
        try {
          json = JSON.parse(text);
        } catch {
          json = text;
        }
        resolve({ status: res.statusCode ?? 0, json, headers: res.headers });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('node monitor envelope', () => {
  it('answers success with Method, Code, Error:false and Value, without ErrMessage', async () => {
    const r = await h.post({ Method: 'getdaemon' });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/application\/json/);
    expect(Object.keys(r.json)).toEqual(['Method', 'Code', 'Error', 'Value']);
    expect(r.json).toMatchObject({ Method: 'getdaemon', Code: 0, Error: false });
    expect(r.json.Value).toEqual({ Timezone: expect.stringMatching(/^[+-]\d{4}$/), Version: '0.1.0-test' });
  });

  it('keeps Error:false with an ErrMessage for code 3', async () => {
    const hash = await h.genid();
    const r = await h.call('getmynodes', { Hash: hash });
    expect(r).toEqual({ Method: 'getmynodes', Code: 3, Error: false, ErrMessage: 'No info/entries in a database', Value: null });
  });

  it('decodes JSON strictly: bad JSON, unknown top-level keys, a non-object Value → 1003', async () => {
    for (const body of ['{"Method":"genid"', '[]', '"genid"', '{"Method":"genid","Extra":1}', '{"Method":"getdaemon","Value":[1]}', '{"Method":"getdaemon","Value":"x"}', '{"Method":"getdaemon"} trailing']) {
      const r = await h.post(body, { contentType: 'application/json' });
      expect(r.json, body).toEqual({ Method: '', Code: 1003, Error: true, ErrMessage: 'Passed JSON is incorrect', Value: null });
      expect(r.status).toBe(400);
    }
  });

  it('refuses a missing or malformed Method with 1000', async () => {
    for (const body of [{}, { Value: {} }, { Method: '' }, { Method: 5 }, { Method: null }, { Method: ['genid'] }]) {
      const r = await h.post(body);
      expect(r.json.Code, JSON.stringify(body)).toBe(1000);
      expect(r.json.Error).toBe(true);
      expect(r.status).toBe(400);
    }
    const f = await h.form({ Hash: 'x' });
    expect(f.Code).toBe(1000);
  });

  it('answers 1001 for unknown and wrongly cased methods, in the body or the path', async () => {
    for (const m of ['nosuch', 'GenID', 'GETDAEMON', 'getDaemon']) {
      const r = await h.post({ Method: m });
      expect(r.json).toMatchObject({ Code: 1001, Error: true, ErrMessage: 'The passed Method was not found' });
      expect(r.status).toBe(404);
    }
    const p = await h.post({ Method: 'getdaemon' }, { path: '/api/nosuch' });
    expect(p.json.Code).toBe(1001);
  });

  it('takes the method from POST /api/{method}, overriding the body', async () => {
    const r = await h.post('', { path: '/api/getdaemon' });
    expect(r.json).toMatchObject({ Method: 'getdaemon', Code: 0 });
    const o = await h.post({ Method: 'genid' }, { path: '/api/getdaemon' });
    expect(o.json.Method).toBe('getdaemon');
    const f = await h.post('Method=genid', { path: '/api/getdaemon', contentType: 'application/x-www-form-urlencoded' });
    expect(f.json.Method).toBe('getdaemon');
  });

  it('reads form-encoded bodies: every field but Method goes to Value', async () => {
    const r = await h.form({ Method: 'getdaemon' });
    expect(r).toMatchObject({ Method: 'getdaemon', Code: 0, Error: false });
    const hash = await h.genid();
    const g = await h.form({ Method: 'getmynodes', Hash: hash });
    expect(g.Code).toBe(3);
  });

  it('reads a body without a Content-Type as JSON when it starts with { and as a form otherwise', async () => {
    const j = await h.post('{"Method":"getdaemon"}');
    expect(j.json.Code).toBe(0);
    const f = await h.post('Method=getdaemon');
    expect(f.json.Code).toBe(0);
  });

  it('accepts the method in the query string, as Go ParseForm does', async () => {
    const r = await h.post('', { path: '/api?Method=getdaemon' });
    expect(r.json.Method).toBe('getdaemon');
  });

  it('refuses other content types with 415 in the envelope', async () => {
    const r = await h.post('Method=getdaemon', { contentType: 'text/plain' });
    expect(r.status).toBe(415);
    expect(r.json).toMatchObject({ Method: '', Code: 5, Error: true });
  });

  it('accepts only POST: other methods get 405 with Allow and the envelope', async () => {
    for (const m of ['GET', 'PUT', 'DELETE', 'PATCH']) {
      const r = await raw(m, '/api');
      expect(r.status).toBe(405);
      expect(r.headers.allow).toBe('POST');
      expect(r.json).toMatchObject({ Method: '', Code: 5, Error: true, Value: null });
    }
    const g = await raw('GET', '/api/genid');
    expect(g.status).toBe(405);
  });

  it('answers unknown paths with 404 in the envelope', async () => {
    const r = await raw('POST', '/nope', '{}', { 'content-type': 'application/json' });
    expect(r.status).toBe(404);
    expect(r.json).toMatchObject({ Code: 5, Error: true, Value: null });
  });

  it('refuses a body over the limit with 413', async () => {
    const big = JSON.stringify({ Method: 'getdaemon', Value: { pad: 'x'.repeat(5 << 20) } });
    const r = await h.post(big, { contentType: 'application/json' });
    expect(r.status).toBe(413);
    expect(r.json.Error).toBe(true);
  });

  it('declares a generous per-IP rate limit on both API routes', () => {
    const routes = h.instance.router.routes().filter((r) => r.pattern.startsWith('/api'));
    expect(routes.map((r) => `${r.method} ${r.pattern}`).sort()).toEqual(['POST /api', 'POST /api/:method']);
    for (const r of routes) expect(r.rateLimitDecl).toEqual({ limit: 600, interval: 60 });
  });
});

describe('envelope', () => {
  it('serialises in the origin key order, ErrMessage only when set', () => {
    expect(toJson(reply('x', 0, { a: 1 }))).toBe('{"Method":"x","Code":0,"Error":false,"Value":{"a":1}}');
    expect(toJson(reply('x', 3))).toBe('{"Method":"x","Code":3,"Error":false,"ErrMessage":"No info/entries in a database","Value":null}');
    expect(toJson(reply('x', 17))).toContain('"Error":true');
  });
});

describe('raw JSON splicing', () => {
  it('places cached text into replies, nested too, and cannot be spoofed by strings', async () => {
    const { RawJson } = await import('../../src/nodes/envelope.js');
    const inner = reply('getfullstack', 0, new RawJson('{"List":[1,2]}'));
    const text = toJson(reply('getfullstack', 0, { Nodes: inner, Other: { Version: '\u0000raw:abcdef012345:0' } }));
    const o = JSON.parse(text);
    expect(o.Value.Nodes.Value).toEqual({ List: [1, 2] });
    expect(o.Value.Other.Version).toBe('\u0000raw:abcdef012345:0');
  });
});
