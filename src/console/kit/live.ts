/** Live data: an EventSource with automatic reconnect, and polling as the fallback. */
import { useEffect, useRef, useState } from 'preact/hooks';

export type LiveState = 'connecting' | 'live' | 'down';

/**
 * Subscribe to server-sent events at `path`; `handlers[event]` gets each event's parsed data.
 * The browser reconnects by itself (the server's `retry:`); the state says whether it is connected.
 */
export function useEventSource(path: string | null, handlers: Record<string, (data: unknown) => void>): LiveState {
  const [state, setState] = useState<LiveState>('connecting');
  const ref = useRef(handlers);
  ref.current = handlers;
  useEffect(() => {
    if (!path) return;
    const es = new EventSource(path, { withCredentials: true });
    es.onopen = () => setState('live');
    es.onerror = () => setState(es.readyState === EventSource.CLOSED ? 'down' : 'connecting');
    const names = Object.keys(ref.current);
    const listeners = names.map((name) => {
      const fn = (e: MessageEvent) => {
        let data: unknown = e.data;
        try {
          data = JSON.parse(e.data as string);
        } catch {
          /* plain text */
        }
        ref.current[name]?.(data);
      };
      es.addEventListener(name, fn as EventListener);
      return [name, fn] as const;
    });
    return () => {
      for (const [name, fn] of listeners) es.removeEventListener(name, fn as EventListener);
      es.close();
    };
  }, [path]);
  return state;
}

/** Call `fn` now and every `ms` while the page is visible; returns a function to call it at once. */
export function usePoll(fn: () => unknown, ms: number, deps: unknown[] = []): () => void {
  const ref = useRef(fn);
  ref.current = fn;
  useEffect(() => {
    let stopped = false;
    const run = () => {
      if (!stopped && document.visibilityState !== 'hidden') void ref.current();
    };
    run();
    const t = setInterval(run, ms);
    return () => {
      stopped = true;
      clearInterval(t);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [ms, ...deps]);
  return () => void ref.current();
}
