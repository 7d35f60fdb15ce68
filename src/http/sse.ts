/**
 * Server-sent events for the consoles' live views: `openSse` answers the request with an event
 * stream (no buffering by proxies, a comment every `keepAliveMs` so idle connections stay open),
 * and returns a writer that drops events while the socket is backed up (a slow client gets the
 * next event, never an unbounded queue) and runs `onClose` when the client goes away.
 */
import type { Socket } from 'node:net';
import type { RequestContext } from './context.js';

/** Open streams and their sockets, so a listener that closes ends them at once (see endEventStreams). */
const open = new Map<SseStream, Socket | null>();

/**
 * End the event streams on these sockets (a listener draining for shutdown or a rebind: a stream
 * never finishes by itself, so it would hold the drain for its whole timeout). Clients reconnect.
 */
export function endEventStreams(sockets: ReadonlySet<Socket>): void {
  for (const [stream, socket] of open) if (socket && sockets.has(socket)) stream.close();
}

export interface SseStream {
  /** Send one event; `data` is JSON-encoded unless it is a string. False when the client is slow or gone. */
  send(event: string, data: unknown, id?: string): boolean;
  /** End the stream. */
  close(): void;
  readonly closed: boolean;
}

export interface SseOptions {
  /** Milliseconds between keep-alive comments; default 15 s. */
  keepAliveMs?: number;
  /** Client reconnect delay announced with `retry:`; default 2 s. */
  retryMs?: number;
  onClose?: () => void;
}

export function openSse(ctx: RequestContext, opts: SseOptions = {}): SseStream {
  const res = ctx.res;
  res.statusCode = 200;
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Accel-Buffering', 'no');
  res.setHeader('Connection', 'keep-alive');
  res.flushHeaders();
  res.socket?.setNoDelay(true);
  let closed = false;
  const keepAlive = setInterval(() => {
    if (!res.writableNeedDrain) res.write(': keep-alive\n\n');
  }, opts.keepAliveMs ?? 15_000);
  keepAlive.unref();
  const finish = () => {
    if (closed) return;
    closed = true;
    clearInterval(keepAlive);
    open.delete(stream);
    opts.onClose?.();
  };
  res.on('close', finish);
  res.write(`retry: ${opts.retryMs ?? 2000}\n\n`);
  const stream: SseStream = {
    get closed() {
      return closed;
    },
    send(event, data, id) {
      if (closed || res.destroyed) return false;
      if (res.writableNeedDrain) return false;
      const text = typeof data === 'string' ? data : JSON.stringify(data);
      let frame = `event: ${event}\n`;
      if (id !== undefined) frame += `id: ${id}\n`;
      for (const line of text.split('\n')) frame += `data: ${line}\n`;
      res.write(frame + '\n');
      return true;
    },
    close() {
      if (!closed && !res.writableEnded) res.end();
      finish();
    },
  };
  open.set(stream, (res.socket as Socket | null) ?? null);
  return stream;
}
