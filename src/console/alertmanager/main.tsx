/**
 * The alert manager's web console, at / of its listener, with Alertmanager's own hash routes
 * (#/alerts, #/silences, #/silences/new, #/silences/{id}, #/silences/{id}/edit, #/status), so
 * bookmarks and the links in notifications ({{ .ExternalURL }}/#/alerts?receiver=...) keep working.
 * Live: GET /ctl/events says when the alerts or silences changed and the page fetches them again.
 */
import { render } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import '../kit/theme.css';
import './am.css';
import { TopBar } from '../kit/components.js';
import { useEventSource } from '../kit/live.js';
import { useHashRoute } from '../kit/router.js';
import { AlertsPage } from './alerts.js';
import { Tick } from '../kit/data.js';
import { SilenceFormPage } from './silence-form.js';
import { SilenceView, SilencesPage } from './silences.js';
import { StatusPage } from './status.js';

function Page() {
  const route = useHashRoute();
  const p = route.path.replace(/\/+$/, '') || '/';
  let m: RegExpExecArray | null;
  if (p === '/' || p === '/alerts') return <AlertsPage route={route} />;
  if (p === '/silences') return <SilencesPage route={route} />;
  if (p === '/silences/new') return <SilenceFormPage key={`new${route.query.toString()}`} route={route} />;
  if ((m = /^\/silences\/([^/]+)\/edit$/.exec(p))) return <SilenceFormPage key={`edit${m[1]}`} route={route} id={decodeURIComponent(m[1]!)} />;
  if ((m = /^\/silences\/([^/]+)$/.exec(p))) return <SilenceView key={m[1]} id={decodeURIComponent(m[1]!)} />;
  if (p === '/status') return <StatusPage />;
  return (
    <section>
      <h1>Not found</h1>
      <p>
        No page at <code>#{route.path}</code>. <a href="#/alerts">Alerts</a>
      </p>
    </section>
  );
}

function App() {
  const route = useHashRoute();
  const [tick, setTick] = useState(0);
  const bump = () => setTick((t) => t + 1);
  const connected = useRef(false);
  // A hidden tab fetches nothing; it catches up when shown again.
  const missed = useRef(false);
  const changed = () => {
    if (document.visibilityState === 'hidden') missed.current = true;
    else bump();
  };
  useEffect(() => {
    const on = () => {
      if (document.visibilityState === 'visible' && missed.current) {
        missed.current = false;
        bump();
      }
    };
    document.addEventListener('visibilitychange', on);
    return () => document.removeEventListener('visibilitychange', on);
  }, []);
  const live = useEventSource('ctl/events', {
    changed,
    // A reconnect may have missed changes.
    hello: () => (connected.current ? changed() : (connected.current = true)),
  });
  // Without the event stream (a proxy that buffers it), poll instead.
  useEffect(() => {
    if (live === 'live') return;
    const t = setInterval(changed, 30_000);
    return () => clearInterval(t);
  }, [live]);
  const ctx = useMemo(() => ({ tick, bump }), [tick]);
  const links = [
    { href: '#/alerts', label: 'Alerts', current: route.path === '/' || route.path.startsWith('/alerts') },
    { href: '#/silences', label: 'Silences', current: route.path.startsWith('/silences') },
    { href: '#/status', label: 'Status', current: route.path.startsWith('/status') },
  ];
  return (
    <Tick.Provider value={ctx}>
      <a class="sr-only" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to content
      </a>
      <TopBar brand="Alertmanager" brandHref="#/alerts" links={links} live={live} />
      <main id="main" tabIndex={-1}>
        <Page />
      </main>
    </Tick.Provider>
  );
}

render(<App />, document.getElementById('app')!);
