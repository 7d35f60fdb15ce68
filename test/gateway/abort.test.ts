import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RequestAbort, toAbortSignal } from '../../src/gateway/abort.js';

describe('RequestAbort', () => {
  it('behaves like an AbortController and its signal for the gateway call path', () => {
    const a = new RequestAbort();
    const calls: string[] = [];
    const first = () => calls.push('first');
    const removed = () => calls.push('removed');
    a.addEventListener('abort', first, { once: true });
    a.addEventListener('abort', first); // the same listener twice runs once
    a.addEventListener('abort', removed);
    a.addEventListener('abort', () => calls.push('second'));
    a.removeEventListener('abort', removed);
    expect(a.aborted).toBe(false);
    a.abort();
    a.abort(); // only once
    expect(calls).toEqual(['first', 'second']);
    expect(a.aborted).toBe(true);
    expect(a.reason).toBeInstanceOf(DOMException);
    expect((a.reason as DOMException).name).toBe('AbortError');
    a.addEventListener('abort', () => calls.push('late')); // after the event: never runs
    expect(calls).toEqual(['first', 'second']);
    const b = new RequestAbort();
    const why = new Error('why');
    b.abort(why);
    expect(b.reason).toBe(why);
  });

  it('converts to a real AbortSignal that follows it', () => {
    const a = new RequestAbort();
    const s = toAbortSignal(a);
    expect(s).toBeInstanceOf(AbortSignal);
    expect(s.aborted).toBe(false);
    a.abort('gone');
    expect(s.aborted).toBe(true);
    expect(s.reason).toBe('gone');
    const real = new AbortController().signal;
    expect(toAbortSignal(real)).toBe(real);
  });

  describe('as the signal of an undici request', () => {
    let server: Server;
    let origin: string;
    beforeAll(async () => {
      server = createServer(() => undefined); // never answers
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    });

    it('aborts the call', async () => {
      const agent = new Agent();
      const a = new RequestAbort();
      const pending = agent.request({ origin, path: '/', method: 'POST', body: '{}', signal: a as unknown as AbortSignal });
      setTimeout(() => a.abort(), 20);
      await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
      await agent.close();
    });
  });
});
