/**
 * A client request's abort switch, cheaper than Node's AbortController: creating one of those (and its
 * signal) and adding and removing listeners costs several microseconds on Node 20, and a proxied call
 * used two. This object is the controller and the signal at once. undici accepts it as `signal` (it
 * only needs `aborted`, `reason` and add/removeEventListener); code that needs a real AbortSignal
 * (AbortSignal.any, fetch) converts it with `toAbortSignal`.
 */

/** The part of AbortSignal the gateway's call path uses; a real AbortSignal is one too. */
export interface AbortLike {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

export class RequestAbort implements AbortLike {
  aborted = false;
  reason: unknown = undefined;
  private listeners: (() => void)[] | undefined;

  /** Abort once: listeners run in the order they were added (as AbortSignal's do), each at most once. */
  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason ?? new DOMException('This operation was aborted', 'AbortError');
    const list = this.listeners;
    this.listeners = undefined;
    if (!list) return;
    for (const fn of list) {
      try {
        fn();
      } catch (e) {
        // As with EventTarget: a throwing listener does not stop the others; the error is reported.
        queueMicrotask(() => {
          throw e;
        });
      }
    }
  }

  addEventListener(_type: 'abort', listener: () => void, _options?: { once?: boolean }): void {
    // After the abort the event is over; a listener added twice runs once (EventTarget semantics).
    if (this.aborted) return;
    const list = (this.listeners ??= []);
    if (!list.includes(listener)) list.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const list = this.listeners;
    if (!list) return;
    const i = list.indexOf(listener);
    if (i >= 0) list.splice(i, 1);
  }
}

/** A real AbortSignal following `s` (for APIs that insist on one). */
export function toAbortSignal(s: AbortLike): AbortSignal {
  if (s instanceof AbortSignal) return s;
  const c = new AbortController();
  if (s.aborted) c.abort(s.reason);
  else s.addEventListener('abort', () => c.abort(s.reason), { once: true });
  return c.signal;
}
