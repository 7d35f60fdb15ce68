// The gateway's dashboard, served at /dashboard (and /dashboard/<page>) by the gateway listener.
// It calls the same /api/* routes as `ctl gateway` and any other client, with the auth_token
// cookie that POST /api/auth/login sets; with require-login off it opens without a login.
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import './style.css';
import { api, ApiError, setUnauthorizedHandler, ThemeButton } from './ui';
import { HomePage } from './pages/home';
import { ProvidersPage } from './pages/providers';
import { LogsPage } from './pages/logs';
import { ModelsPage } from './pages/models';
import { CombosPage } from './pages/combos';
import { KeysPage } from './pages/keys';
import { UsagePage } from './pages/usage';
import { CachePage } from './pages/cache';
import { SettingsPage } from './pages/settings';

const BASE = '/dashboard';

interface PageDef {
  path: string;
  title: string;
  view: () => preact.JSX.Element;
}

const PAGES: PageDef[] = [
  { path: '', title: 'Overview', view: () => <HomePage /> },
  { path: '/providers', title: 'Providers', view: () => <ProvidersPage /> },
  { path: '/models', title: 'Models', view: () => <ModelsPage /> },
  { path: '/combos', title: 'Combos', view: () => <CombosPage /> },
  { path: '/keys', title: 'API keys', view: () => <KeysPage /> },
  { path: '/usage', title: 'Usage', view: () => <UsagePage /> },
  { path: '/logs', title: 'Request log', view: () => <LogsPage /> },
  { path: '/cache', title: 'Cache', view: () => <CachePage /> },
  { path: '/settings', title: 'Settings', view: () => <SettingsPage /> },
];

function currentPage(): string {
  const p = location.pathname.replace(/\/+$/, '');
  return p.startsWith(BASE) ? p.slice(BASE.length) : '';
}

export function navigate(to: string): void {
  if (location.pathname + location.search === to) return;
  history.pushState(null, '', to);
  dispatchEvent(new PopStateEvent('popstate'));
}

/** Plain links, so they work with the keyboard, a middle click and without script; a click stays in the app. */
function onLinkClick(e: MouseEvent): void {
  const a = (e.target as HTMLElement).closest('a');
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const href = a.getAttribute('href');
  if (!href || !href.startsWith(BASE) || a.target) return;
  e.preventDefault();
  navigate(href);
}

function Login({ onDone, configured, ended }: { onDone: () => void; configured: boolean; ended?: boolean }) {
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await api('/api/auth/login', { method: 'POST', body: { password } });
      onDone();
    } catch (err) {
      setError(err instanceof ApiError && err.status === 401 ? 'That password is not right.' : (err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="login" id="main">
      <form class="card login-card" onSubmit={submit} aria-labelledby="login-title">
        <h1 id="login-title">ctl gateway</h1>
        {!configured && (
          <p class="note warn">
            No password is set: start the daemon with <code>INITIAL_PASSWORD</code>, or save one with <code>POST /api/auth/password</code> over the control socket.
          </p>
        )}
        {ended && (
          <p class="note warn" role="status">
            Your session has ended: sign in again.
          </p>
        )}
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required autofocus value={password} onInput={(e) => setPassword((e.target as HTMLInputElement).value)} />
        {error && (
          <p class="note err" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}

interface AuthStatus {
  authenticated: boolean;
  loginConfigured: boolean;
  requireLogin?: boolean;
  /** Signed out by a 401 in the middle of a session (the cookie expired or was revoked). */
  ended?: boolean;
}

function App() {
  const [auth, setAuth] = useState<AuthStatus | null>(null);
  const [page, setPage] = useState(currentPage());
  const [navOpen, setNavOpen] = useState(false);

  const check = () =>
    api<AuthStatus>('/api/auth/status')
      .then(setAuth)
      .catch(() => setAuth({ authenticated: false, loginConfigured: true }));
  useEffect(() => {
    void check();
    setUnauthorizedHandler(() => setAuth((a) => (a ? { ...a, authenticated: false, requireLogin: true, ended: a.ended || a.authenticated } : a)));
    const pop = () => {
      setPage(currentPage());
      setNavOpen(false);
    };
    addEventListener('popstate', pop);
    document.addEventListener('click', onLinkClick);
    return () => {
      removeEventListener('popstate', pop);
      document.removeEventListener('click', onLinkClick);
    };
  }, []);

  // Escape closes the phone menu and gives the keyboard back to its button.
  // (One listener for the page's life, reading the state from a ref: listening only while the menu
  // is open would miss an Escape pressed before the effect ran.)
  const navOpenRef = useRef(navOpen);
  navOpenRef.current = navOpen;
  useEffect(() => {
    const on = (e: KeyboardEvent) => {
      if (e.key !== 'Escape' || !navOpenRef.current) return;
      setNavOpen(false);
      document.querySelector<HTMLButtonElement>('button.menu')?.focus();
    };
    document.addEventListener('keydown', on);
    return () => document.removeEventListener('keydown', on);
  }, []);

  // /dashboard/providers/{id} (OmniRoute's page for one provider): the providers, that one marked.
  const one = /^\/providers\/([^/]+)$/.exec(page);
  const def: PageDef | undefined = one
    ? { path: '/providers', title: 'Providers', view: () => <ProvidersPage focus={decodeURIComponent(one[1]!)} /> }
    : PAGES.find((p) => p.path === page);
  useEffect(() => {
    document.title = `${def?.title ?? 'Not found'} · ctl gateway`;
    if (location.pathname === '/login' && auth && (auth.authenticated || auth.requireLogin === false)) history.replaceState(null, '', BASE);
  }, [def, auth]);

  if (!auth) return <p class="muted boot">Loading…</p>;
  if (!auth.authenticated && auth.requireLogin !== false) return <Login configured={auth.loginConfigured} ended={auth.ended} onDone={() => void check()} />;

  const logout = async () => {
    await api('/api/auth/logout', { method: 'POST' }).catch(() => undefined);
    await check();
  };
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <button class="menu" aria-expanded={navOpen} aria-controls="nav" onClick={() => setNavOpen(!navOpen)}>
          Menu
        </button>
        <span class="brand">ctl gateway</span>
        <span class="spacer" />
        <ThemeButton />
        {auth.authenticated && <button onClick={() => void logout()}>Sign out</button>}
      </header>
      <nav id="nav" class={navOpen ? 'nav open' : 'nav'} aria-label="Dashboard">
        <ul>
          {PAGES.map((p) => (
            <li>
              <a href={BASE + p.path} aria-current={p.path === def?.path ? 'page' : undefined}>
                {p.title}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        <h1>{def?.title ?? 'Not found'}</h1>
        {def ? def.view() : <p>No such page. Go to the <a href={BASE}>overview</a>.</p>}
      </main>
    </div>
  );
}

render(<App />, document.getElementById('app') ?? document.body);
