/** Fetching what a page shows, again whenever the page's live source says something changed (a tick). */
import { createContext } from 'preact';
import { useContext, useEffect, useRef, useState } from 'preact/hooks';
import { api } from './api.js';

/** Bumped on every `changed` event (and by hand after a write): pages refetch. */
export const Tick = createContext<{ tick: number; bump: () => void }>({ tick: 0, bump: () => undefined });

export interface Fetched<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
}

/** GET `path` (null: nothing), again on every tick; the last data stays while a new answer loads. */
export function useFetch<T>(path: string | null): Fetched<T> {
  const { tick } = useContext(Tick);
  const [state, setState] = useState<Fetched<T>>({ data: undefined, error: undefined, loading: path !== null });
  const seq = useRef(0);
  const lastPath = useRef<string | null>(null);
  useEffect(() => {
    if (path === null) return;
    const my = ++seq.current;
    if (lastPath.current !== path) setState({ data: undefined, error: undefined, loading: true });
    lastPath.current = path;
    api<T>(path).then(
      (data) => my === seq.current && setState({ data, error: undefined, loading: false }),
      (error: Error) => my === seq.current && setState((s) => ({ data: s.data, error, loading: false })),
    );
  }, [path, tick]);
  return state;
}
