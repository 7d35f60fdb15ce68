/** Small pieces every console uses: the top bar with its navigation, tabs, chips, error banner. */
import type { ComponentChildren } from 'preact';
import type { LiveState } from './live.js';
import { ApiError } from './api.js';

export interface NavLink {
  href: string;
  label: string;
  current: boolean;
}

export function TopBar(props: { brand: string; brandHref?: string; links: NavLink[]; live?: LiveState; right?: ComponentChildren }) {
  return (
    <header class="topbar">
      <a class="brand" href={props.brandHref ?? '#/'}>
        {props.brand}
      </a>
      <nav aria-label="Main">
        {props.links.map((l) => (
          <a key={l.href} href={l.href} aria-current={l.current ? 'page' : undefined}>
            {l.label}
          </a>
        ))}
      </nav>
      {props.right}
      {props.live && <LiveIndicator state={props.live} />}
    </header>
  );
}

export function LiveIndicator({ state }: { state: LiveState }) {
  const text = state === 'live' ? 'live' : state === 'connecting' ? 'connecting…' : 'disconnected';
  return (
    <span class="live" role="status" aria-live="polite" data-live={state}>
      <span class={`live-dot ${state === 'live' ? 'on' : state === 'down' ? 'off' : ''}`} aria-hidden="true" />
      {text}
    </span>
  );
}

export interface Tab {
  id: string;
  label: ComponentChildren;
}

/** A tab list (arrow keys move between tabs, as WAI-ARIA describes). */
export function Tabs(props: { tabs: Tab[]; selected: string; onSelect: (id: string) => void; label: string }) {
  const onKey = (e: KeyboardEvent) => {
    if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
    const i = props.tabs.findIndex((t) => t.id === props.selected);
    const next = props.tabs[(i + (e.key === 'ArrowRight' ? 1 : props.tabs.length - 1)) % props.tabs.length]!;
    props.onSelect(next.id);
    const el = (e.currentTarget as HTMLElement).querySelector<HTMLElement>(`[data-tab="${next.id}"]`);
    el?.focus();
  };
  return (
    <div class="tabs" role="tablist" aria-label={props.label} onKeyDown={onKey}>
      {props.tabs.map((t) => (
        <button
          key={t.id}
          role="tab"
          type="button"
          data-tab={t.id}
          aria-selected={t.id === props.selected}
          tabIndex={t.id === props.selected ? 0 : -1}
          onClick={() => props.onSelect(t.id)}
        >
          {t.label}
        </button>
      ))}
    </div>
  );
}

export function Chip(props: { children: ComponentChildren; onClick?: () => void; onRemove?: () => void; title?: string }) {
  if (props.onClick && !props.onRemove) {
    return (
      <button type="button" class="chip" onClick={props.onClick} title={props.title}>
        {props.children}
      </button>
    );
  }
  return (
    <span class="chip" title={props.title}>
      {props.children}
      {props.onRemove && (
        <button type="button" class="x" aria-label="Remove" onClick={props.onRemove}>
          ×
        </button>
      )}
    </span>
  );
}

export function Banner({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <div class="banner" role="alert">
      {error instanceof ApiError ? `The server answered ${error.status}: ${error.message}` : error instanceof Error ? error.message : String(error)}
    </div>
  );
}
