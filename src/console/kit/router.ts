/** Hash routes (`#/alerts?filter=...`), the scheme Alertmanager's own UI uses and its links point at. */
import { useEffect, useState } from 'preact/hooks';

export interface HashRoute {
  /** The path after `#`, e.g. `/silences/new` ('/' when empty). */
  path: string;
  query: URLSearchParams;
}

export function parseHash(hash: string): HashRoute {
  const h = hash.replace(/^#/, '');
  const q = h.indexOf('?');
  const path = (q < 0 ? h : h.slice(0, q)) || '/';
  return { path: path.startsWith('/') ? path : `/${path}`, query: new URLSearchParams(q < 0 ? '' : h.slice(q + 1)) };
}

export function useHashRoute(): HashRoute {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseHash(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

/** `#path?query` from parts (repeated keys kept). */
export function hashHref(path: string, query?: Array<[string, string]> | URLSearchParams): string {
  const q = query instanceof URLSearchParams ? query.toString() : new URLSearchParams(query ?? []).toString();
  return `#${path}${q ? `?${q}` : ''}`;
}

/** Go to a hash route; `replace` keeps the history entry (for typing in a filter). */
export function navigate(href: string, replace = false): void {
  if (replace) history.replaceState(null, '', href);
  else location.hash = href.replace(/^#/, '');
  if (replace) dispatchEvent(new HashChangeEvent('hashchange'));
}
