// The content pipeline's console, at / of its listener: sign in with the owner password (the same
// POST /api/auth/login as any client; the bearer token stays in this tab), then review drafted posts
// (approve with an optional schedule, edit, reject with feedback), browse posts, manage sources, and
// follow runs and schedules. It shares the gateway dashboard's look and small components.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import '../gateway/style.css';
import { Badge, Card, fmtTime, Stat, Table, ThemeButton } from '../gateway/ui';
import { hashHref, useHashRoute } from '../kit/router';

const TOKEN_KEY = 'ctl-pipeline-token';
let token = '';
try {
  token = sessionStorage.getItem(TOKEN_KEY) ?? '';
} catch {
  /* storage off */
}
let onSignedOut: () => void = () => undefined;

function setToken(t: string): void {
  token = t;
  try {
    if (t) sessionStorage.setItem(TOKEN_KEY, t);
    else sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    /* storage off: signed in until the page is closed */
  }
}

class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function api<T = any>(path: string, opts: { method?: string; body?: unknown } = {}): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(path, { method: opts.method ?? 'GET', headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body), credentials: 'same-origin' });
  const text = await res.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (!res.ok) {
    if (res.status === 401 && path !== '/api/auth/login') {
      setToken('');
      onSignedOut();
    }
    const d = json?.detail;
    throw new ApiError(res.status, typeof d === 'string' ? d : Array.isArray(d) ? d.map((x: any) => x.msg ?? JSON.stringify(x)).join('; ') : `${res.status} ${res.statusText}`);
  }
  return json as T;
}

function useGet<T = any>(path: string, everyMs?: number): { data: T | undefined; error: string | undefined; reload: () => void } {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = () =>
      api<T>(path)
        .then((d) => live && (setData(d), setError(undefined)))
        .catch((e: Error) => live && setError(e.message))
        .finally(() => {
          if (live && everyMs) timer = setTimeout(load, everyMs);
        });
    void load();
    return () => {
      live = false;
      if (timer) clearTimeout(timer);
    };
  }, [path, tick, everyMs]);
  return { data, error, reload: () => setTick((t) => t + 1) };
}

function Problem({ error }: { error?: string }) {
  return error ? (
    <p class="note err" role="alert">
      {error}
    </p>
  ) : null;
}

function Login({ onDone }: { onDone: () => void }) {
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | undefined>();
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      const r = await api<{ access_token: string }>('/api/auth/login', { method: 'POST', body: { password } });
      setToken(r.access_token);
      onDone();
    } catch (err) {
      setError((err as ApiError).status === 503 ? 'Login is off: no owner password is configured (pipeline.owner-password-hash in ctl.yaml).' : (err as Error).message);
    }
  };
  return (
    <main class="login" id="main">
      <form class="card login-card" onSubmit={(e) => void submit(e)} aria-labelledby="login-title">
        <h1 id="login-title">ctl pipeline</h1>
        <label for="password">Owner password</label>
        <input id="password" type="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword((e.target as HTMLInputElement).value)} />
        <Problem error={error} />
        <button type="submit" class="primary">
          Sign in
        </button>
      </form>
    </main>
  );
}

function statusTone(s: string): 'ok' | 'warn' | 'err' | 'muted' {
  return s === 'approved' || s === 'published' || s === 'ok' || s === 'completed' ? 'ok' : s === 'pending' || s === 'running' ? 'warn' : s === 'rejected' || s === 'failed' ? 'err' : 'muted';
}

/** One post to review: approve (optionally at a time), edit its text, reject with feedback. */
function PostCard({ post, onChange }: { post: any; onChange: () => void }) {
  const [editing, setEditing] = useState(false);
  const [content, setContent] = useState<string>(post.content);
  const [feedback, setFeedback] = useState<string>(post.feedback ?? '');
  const [when, setWhen] = useState('');
  const [error, setError] = useState<string | undefined>();
  const patch = async (body: Record<string, unknown>) => {
    setError(undefined);
    try {
      await api(`/api/posts/${post.id}`, { method: 'PATCH', body });
      setEditing(false);
      onChange();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const id = `post-${post.id}`;
  return (
    <article class="card" aria-labelledby={`${id}-title`} data-post={post.id}>
      <header class="card-head">
        <h2 id={`${id}-title`}>
          Post {post.id} <Badge tone={statusTone(post.status)}>{post.status}</Badge>
        </h2>
        <span class="muted small">
          {post.category ?? ''} {post.source_name ? `· ${post.source_name}` : ''} · {fmtTime(post.created_at)}
        </span>
      </header>
      {editing ? (
        <label>
          Text
          <textarea rows={5} value={content} onInput={(e) => setContent((e.target as HTMLTextAreaElement).value)} />
        </label>
      ) : (
        <p class="post-text">{post.content}</p>
      )}
      {(post.thread ?? []).length > 0 && (
        <ol class="small">
          {post.thread.map((t: string) => (
            <li>{t}</li>
          ))}
        </ol>
      )}
      {post.source_url && (
        <p class="small">
          Source: <a href={post.source_url} rel="noreferrer noopener" target="_blank">{post.source_title ?? post.source_url}</a>
        </p>
      )}
      {post.scheduled_for && <p class="small">Scheduled for {fmtTime(post.scheduled_for)}</p>}
      <Problem error={error} />
      <div class="form-grid">
        <label>
          Publish at (optional, your time) <input type="datetime-local" value={when} onInput={(e) => setWhen((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          Feedback <input value={feedback} onInput={(e) => setFeedback((e.target as HTMLInputElement).value)} />
        </label>
      </div>
      <div class="actions">
        <button class="primary" onClick={() => void patch({ status: 'approved', ...(editing ? { content } : {}), ...(when ? { scheduled_for: new Date(when).toISOString() } : {}), ...(feedback ? { feedback } : {}) })}>
          Approve
        </button>
        {editing ? (
          <button onClick={() => void patch({ content })}>Save text</button>
        ) : (
          <button onClick={() => setEditing(true)} disabled={post.status === 'published'}>
            Edit
          </button>
        )}
        <button class="danger" onClick={() => void patch({ status: 'rejected', ...(feedback ? { feedback } : {}) })}>
          Reject
        </button>
      </div>
    </article>
  );
}

function ReviewPage() {
  const stats = useGet('/api/dashboard/stats', 30_000);
  const posts = useGet<{ items: any[]; total: number }>('/api/posts?status=pending&page_size=50', 30_000);
  const s = stats.data;
  return (
    <>
      {s && (
        <div class="stats">
          <Stat label="To review" value={String(s.pending_review)} />
          <Stat label="Drafted today" value={String(s.posts_today)} />
          <Stat label="This month" value={String(s.posts_this_month)} />
          <Stat label="Published" value={String(s.published_total)} />
          <Stat label="Healthy sources" value={`${s.sources_healthy}/${s.sources_total}`} />
        </div>
      )}
      <Problem error={posts.error} />
      {posts.data && posts.data.items.length === 0 && <p class="muted">Nothing to review: drafted posts appear here after a run.</p>}
      {posts.data?.items.map((p) => (
        <PostCard key={p.id} post={p} onChange={() => (posts.reload(), stats.reload())} />
      ))}
    </>
  );
}

function PostsPage() {
  const [status, setStatus] = useState('');
  const [search, setSearch] = useState('');
  const [q, setQ] = useState('');
  const posts = useGet<{ items: any[]; total: number }>(`/api/posts?page_size=100${status ? `&status=${status}` : ''}${q ? `&search=${encodeURIComponent(q)}` : ''}`);
  return (
    <>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setQ(search);
        }}
      >
        <label>
          Status{' '}
          <select value={status} onChange={(e) => setStatus((e.target as HTMLSelectElement).value)}>
            {['', 'pending', 'approved', 'rejected', 'published', 'failed'].map((s) => (
              <option value={s}>{s || 'any'}</option>
            ))}
          </select>
        </label>
        <label>
          Search <input type="search" value={search} onInput={(e) => setSearch((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit">Search</button>
      </form>
      <Problem error={posts.error} />
      {posts.data && (
        <Card title={`${posts.data.total} posts`}>
          <Table label="Posts" head={['Id', 'Status', 'Text', 'Category', 'Scheduled', 'Likes', 'Created']} empty="No posts.">
            {posts.data.items.map((p) => (
              <tr data-post={p.id}>
                <td>{p.id}</td>
                <td>
                  <Badge tone={statusTone(p.status)}>{p.status}</Badge>
                </td>
                <td class="clip">{p.content}</td>
                <td>{p.category ?? ''}</td>
                <td>{fmtTime(p.scheduled_for)}</td>
                <td class="num">{p.likes ?? 0}</td>
                <td class="nowrap">{fmtTime(p.created_at)}</td>
              </tr>
            ))}
          </Table>
        </Card>
      )}
    </>
  );
}

function SourcesPage() {
  const sources = useGet<any[]>('/api/sources', 30_000);
  const [form, setForm] = useState({ name: '', url: '', source_type: 'rss', category: '' });
  const [error, setError] = useState<string | undefined>();
  const act = async (fn: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await fn();
      sources.reload();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const field = (k: keyof typeof form) => (e: Event) => setForm({ ...form, [k]: (e.target as HTMLInputElement).value });
  return (
    <>
      <Problem error={error ?? sources.error} />
      <Card title="Sources">
        {sources.data && (
          <Table label="Sources" head={['Name', 'Type', 'Category', 'Health', 'Last fetched', '']} empty="No sources yet.">
            {sources.data.map((s) => (
              <tr data-source={s.id}>
                <td>
                  <strong>{s.name}</strong>
                  <div class="muted small clip">{s.url}</div>
                </td>
                <td>{s.source_type}</td>
                <td>{s.category}</td>
                <td>
                  {!s.is_active ? <Badge tone="muted">inactive</Badge> : s.healthy === null ? <Badge tone="muted">not fetched</Badge> : s.healthy ? <Badge tone="ok">healthy</Badge> : <Badge tone="err">failing</Badge>}
                  {s.last_error && <div class="small err-text">{s.last_error}</div>}
                </td>
                <td>{fmtTime(s.last_fetched_at)}</td>
                <td class="actions">
                  <button onClick={() => void act(() => api(`/api/sources/${s.id}`, { method: 'PATCH', body: { is_active: !s.is_active } }))}>{s.is_active ? 'Pause' : 'Activate'}</button>
                  <button class="danger" onClick={() => confirm(`Delete the source ${s.name}?`) && void act(() => api(`/api/sources/${s.id}`, { method: 'DELETE' }))}>
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </Table>
        )}
      </Card>
      <Card title="Add a source">
        <form
          class="form-grid"
          onSubmit={(e) => {
            e.preventDefault();
            void act(async () => {
              await api('/api/sources', { method: 'POST', body: { ...form, is_active: true } });
              setForm({ name: '', url: '', source_type: form.source_type, category: form.category });
            });
          }}
        >
          <label>
            Name <input required value={form.name} onInput={field('name')} />
          </label>
          <label>
            URL <input required type="url" value={form.url} onInput={field('url')} />
          </label>
          <label>
            Type{' '}
            <select value={form.source_type} onChange={field('source_type')}>
              <option value="rss">rss</option>
              <option value="hackernews">hackernews</option>
            </select>
          </label>
          <label>
            Category <input required value={form.category} onInput={field('category')} />
          </label>
          <div>
            <button type="submit" class="primary">
              Add source
            </button>
          </div>
        </form>
      </Card>
    </>
  );
}

function RunsPage() {
  const runs = useGet<any[]>('/api/pipeline/runs?limit=50', 10_000);
  const status = useGet<any>('/api/pipeline/status', 5_000);
  const health = useGet<any>('/api/system/health', 30_000);
  const [error, setError] = useState<string | undefined>();
  const [started, setStarted] = useState<string | undefined>();
  const run = async () => {
    setError(undefined);
    try {
      const r = await api<{ batch_id: string }>('/api/pipeline/run?wait=false', { method: 'POST' });
      setStarted(r.batch_id);
      status.reload();
      runs.reload();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const current = status.data?.running ? status.data.run : undefined;
  return (
    <>
      <Problem error={error} />
      <Card
        title="Runs"
        actions={
          <button class="primary" disabled={!!current} onClick={() => void run()}>
            Run now
          </button>
        }
      >
        {started && (
          <p class="note ok" role="status">
            Run {started} started.
          </p>
        )}
        {current && (
          <p role="status">
            Running: stage <strong>{current.stage}</strong>
          </p>
        )}
        {runs.data && (
          <Table label="Runs" head={['Batch', 'Status', 'Stage', 'Posts', 'Model', 'Started', 'Finished', 'Error']} empty="No runs yet.">
            {runs.data.map((r) => (
              <tr>
                <td>
                  <code>{r.batch_id}</code>
                </td>
                <td>
                  <Badge tone={statusTone(r.status)}>{r.status}</Badge>
                </td>
                <td>{r.stage}</td>
                <td class="num">{r.post_count}</td>
                <td>{r.model ?? ''}</td>
                <td class="nowrap">{fmtTime(r.started_at)}</td>
                <td class="nowrap">{fmtTime(r.finished_at)}</td>
                <td class="small err-text">{r.error ?? ''}</td>
              </tr>
            ))}
          </Table>
        )}
      </Card>
      <Card title="Schedules">
        {health.data && (
          <Table label="Schedules" head={['Job', 'Schedule', 'Next run', 'Last run', 'Outcome']} empty="No schedules: pipeline.schedules in ctl.yaml sets them.">
            {(health.data.schedules ?? []).map((j: any) => (
              <tr>
                <td>{j.job}</td>
                <td>
                  <code>{j.schedule}</code>
                </td>
                <td>{fmtTime(j.next_run_at)}</td>
                <td>{fmtTime(j.last_run_at)}</td>
                <td>
                  {j.running ? <Badge tone="warn">running</Badge> : j.last_status ? <Badge tone={statusTone(j.last_status)}>{j.last_status}</Badge> : '—'}
                  {j.last_error && <div class="small err-text">{j.last_error}</div>}
                </td>
              </tr>
            ))}
          </Table>
        )}
      </Card>
    </>
  );
}

const PAGES = [
  { path: '/review', title: 'Review', view: () => <ReviewPage /> },
  { path: '/posts', title: 'Posts', view: () => <PostsPage /> },
  { path: '/sources', title: 'Sources', view: () => <SourcesPage /> },
  { path: '/runs', title: 'Runs and schedules', view: () => <RunsPage /> },
];

function App() {
  const [signedIn, setSignedIn] = useState(token !== '');
  const route = useHashRoute();
  useEffect(() => {
    onSignedOut = () => setSignedIn(false);
  }, []);
  const page = PAGES.find((p) => p.path === route.path) ?? PAGES[0]!;
  useEffect(() => {
    document.title = `${page.title} · ctl pipeline`;
  }, [page]);
  if (!signedIn) return <Login onDone={() => setSignedIn(true)} />;
  return (
    <div class="shell single">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <span class="brand">ctl pipeline</span>
        <nav class="inline" aria-label="Pipeline">
          {PAGES.map((p) => (
            <a href={hashHref(p.path)} aria-current={p === page ? 'page' : undefined}>
              {p.title}
            </a>
          ))}
        </nav>
        <span class="spacer" />
        <ThemeButton />
        <button
          onClick={() => {
            setToken('');
            setSignedIn(false);
          }}
        >
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <h1>{page.title}</h1>
        {page.view()}
      </main>
    </div>
  );
}

render(<App />, document.getElementById('app') ?? document.body);
