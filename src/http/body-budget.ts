import type { IncomingMessage } from 'node:http';

/**
 * Bytes of request bodies the whole daemon holds in memory at once, across every API. A request
 * whose next chunk does not fit is refused (503, Retry-After) instead of the daemon growing until
 * the kernel ends it: 24 concurrent 30 MiB bodies once took 1.4 GiB and froze every API.
 */
export const DEFAULT_BODY_BUDGET = 256 << 20;

let max = DEFAULT_BODY_BUDGET;
let held = 0;

/** ctl.yaml `max-buffered-body-bytes`. */
export function setBodyBudget(bytes: number): void {
  max = bytes;
}

/** Reserve `n` bytes; false when they would not fit. */
export function takeBodyBytes(n: number): boolean {
  if (held + n > max) return false;
  held += n;
  return true;
}

export function releaseBodyBytes(n: number): void {
  held = Math.max(0, held - n);
}

export function bodyBytesHeld(): number {
  return held;
}

/** How much of a refused body is still read (and thrown away) so the client gets to read the answer. */
const DISCARD_LIMIT = 8 << 20;
/** And for how long. */
const DISCARD_MS = 5_000;

const discarding = new WeakMap<IncomingMessage, Promise<void>>();

/**
 * After refusing a body: read the rest and throw it away; resolves once it is all in. The dispatcher
 * waits for this before it answers an error: a server that answers and closes while the client is
 * still sending makes the kernel reset the connection, and the client loses the answer (a 413 arrived
 * as a reset). Past DISCARD_LIMIT bytes or DISCARD_MS the connection is cut instead.
 */
export function discardBody(req: IncomingMessage): Promise<void> {
  const known = discarding.get(req);
  if (known) return known;
  const done = new Promise<void>((resolve) => {
    if (req.complete || req.readableEnded || req.destroyed) return resolve();
    let seen = 0;
    const cut = () => {
      req.socket?.destroy();
      resolve();
    };
    const timer = setTimeout(cut, DISCARD_MS);
    timer.unref();
    req.on('data', (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > DISCARD_LIMIT) cut();
    });
    const finish = () => {
      clearTimeout(timer);
      resolve();
    };
    req.once('end', finish);
    req.once('close', finish);
    req.on('error', () => undefined);
    req.resume();
  });
  discarding.set(req, done);
  return done;
}
