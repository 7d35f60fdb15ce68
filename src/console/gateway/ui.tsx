// Small pieces the gateway dashboard's pages share: the JSON client, a polling hook, tables, badges.
import type { ComponentChildren, JSX } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

/** Called when an API call answers 401 (the session ended): the app shows the login again. */
let onUnauthorized: () => void = () => undefined;
export function setUnauthorizedHandler(fn: () => void): void {
  onUnauthorized = fn;
}

/** Same-origin JSON call; the auth_token cookie rides along. Errors carry the API's message. */
export async function api<T = any>(path: string, opts: { method?: string; body?: unknown } = {}): Promise<T> {
  const init: RequestInit = { method: opts.method ?? 'GET', credentials: 'same-origin', headers: { Accept: 'application/json' } };
  if (opts.body !== undefined) {
    init.body = JSON.stringify(opts.body);
    (init.headers as Record<string, string>)['Content-Type'] = 'application/json';
  }
  const res = await fetch(path, init);
  const text = await res.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (!res.ok) {
    if (res.status === 401 && !path.startsWith('/api/auth/')) onUnauthorized();
    const e = json?.error;
    const message = typeof e === 'string' ? e : typeof e?.message === 'string' ? e.message : typeof json?.message === 'string' ? json.message : `${res.status} ${res.statusText}`;
    throw new ApiError(res.status, message, typeof e?.code === 'string' ? e.code : json?.code);
  }
  return json as T;
}

export interface Resource<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload: () => void;
}

/** GET `path` now, again every `everyMs` (when given) while the page is visible, and on reload(). */
export function useApi<T = any>(path: string | null, everyMs?: number): Resource<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [loading, setLoading] = useState(path !== null);
  const [tick, setTick] = useState(0);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  useEffect(() => {
    if (path === null) return;
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    // A hidden tab fetches nothing; it looks again each period and loads once it is shown.
    const next = (): void => {
      if (document.hidden) timer = setTimeout(next, everyMs);
      else load();
    };
    const load = () => {
      setLoading(true);
      api<T>(path)
        .then((d) => {
          if (!live) return;
          setData(d);
          setError(undefined);
        })
        .catch((e: Error) => live && setError(e.message))
        .finally(() => {
          if (!live) return;
          setLoading(false);
          if (everyMs) timer = setTimeout(next, everyMs);
        });
    };
    load();
    return () => {
      live = false;
      if (timer) clearTimeout(timer);
    };
  }, [path, tick, everyMs]);
  return { data, error, loading, reload };
}

/** Run an action (a button's POST), showing its error or a short confirmation. */
export function useAction(): [(label: string, fn: () => Promise<unknown>) => Promise<void>, JSX.Element | null] {
  const [msg, setMsg] = useState<{ ok: boolean; text: string } | null>(null);
  const run = useCallback(async (label: string, fn: () => Promise<unknown>) => {
    try {
      await fn();
      setMsg({ ok: true, text: label });
    } catch (e) {
      setMsg({ ok: false, text: (e as Error).message });
    }
  }, []);
  const el = msg ? (
    <p class={msg.ok ? 'note ok' : 'note err'} role={msg.ok ? 'status' : 'alert'}>
      {msg.text}
    </p>
  ) : null;
  return [run, el];
}

export function Badge({ tone, children }: { tone: 'ok' | 'warn' | 'err' | 'muted'; children: ComponentChildren }) {
  return <span class={`badge ${tone}`}>{children}</span>;
}

export function Card({ title, children, actions }: { title?: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section class="card">
      {(title || actions) && (
        <header class="card-head">
          {title && <h2>{title}</h2>}
          {actions && <div class="actions">{actions}</div>}
        </header>
      )}
      {children}
    </section>
  );
}

export function Stat({ label, value, hint }: { label: string; value: ComponentChildren; hint?: string }) {
  return (
    <div class="stat">
      <div class="stat-value">{value}</div>
      <div class="stat-label">{label}</div>
      {hint && <div class="stat-hint">{hint}</div>}
    </div>
  );
}

/** A table that scrolls sideways on a narrow screen instead of squeezing its columns. */
export function Table({ head, children, label, empty }: { head: string[]; children: ComponentChildren; label: string; empty?: string }) {
  const rows = Array.isArray(children) ? children.flat().filter(Boolean) : children ? [children] : [];
  return (
    <div class="table-wrap" role="region" aria-label={label} tabIndex={0}>
      <table>
        <thead>
          <tr>
            {head.map((h) => (
              <th scope="col">{h}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 ? (
            <tr>
              <td colSpan={head.length} class="empty">
                {empty ?? 'Nothing here yet.'}
              </td>
            </tr>
          ) : (
            children
          )}
        </tbody>
      </table>
    </div>
  );
}

export function Loading({ r }: { r: Resource<unknown> }) {
  if (r.error) return <p class="note err" role="alert">{r.error}</p>;
  if (r.data === undefined) return <p class="muted">Loading…</p>;
  return null;
}

export function fmtTime(iso: string | number | null | undefined): string {
  if (iso === null || iso === undefined) return '—';
  const d = new Date(iso);
  return isNaN(d.getTime()) ? '—' : d.toLocaleString();
}

export function fmtUsd(v: number | null | undefined): string {
  if (v === null || v === undefined) return '—';
  if (v === 0) return '$0';
  return v < 0.01 ? `$${v.toFixed(6)}` : `$${v.toFixed(2)}`;
}

export function fmtInt(v: number | null | undefined): string {
  return v === null || v === undefined ? '—' : Math.round(v).toLocaleString();
}

export function fmtMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.round(ms / 60_000)} min`;
}


export type Theme = 'auto' | 'light' | 'dark';
export function applyTheme(t: Theme): void {
  if (t === 'auto') document.documentElement.removeAttribute('data-theme');
  else document.documentElement.setAttribute('data-theme', t);
  dispatchEvent(new Event('ctl-theme'));
}
export function savedTheme(): Theme {
  try {
    const t = localStorage.getItem('ctl-theme');
    return t === 'light' || t === 'dark' ? t : 'auto';
  } catch {
    return 'auto';
  }
}

/** Automatic (the system's), dark or light; remembered in this browser. */
export function ThemeButton() {
  const [theme, setTheme] = useState<Theme>(savedTheme());
  useEffect(() => {
    applyTheme(theme);
    try {
      if (theme === 'auto') localStorage.removeItem('ctl-theme');
      else localStorage.setItem('ctl-theme', theme);
    } catch {
      /* storage off: the choice lasts for this page */
    }
  }, [theme]);
  const next: Record<Theme, Theme> = { auto: 'dark', dark: 'light', light: 'auto' };
  return (
    <button onClick={() => setTheme(next[theme])} title="Switch between automatic, dark and light" aria-label={`Theme: ${theme}`}>
      <span class="wide">Theme: </span>
      {theme}
    </button>
  );
}
