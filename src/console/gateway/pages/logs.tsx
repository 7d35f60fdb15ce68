// The request log: the latest rows (GET /api/usage/request-logs), then every finished request as it
// happens (the SSE stream GET /api/usage/request-logs/stream), with the same filters on both.
import { useEffect, useState } from 'preact/hooks';
import { api, Badge, Card, fmtInt, fmtMs, fmtUsd, Table } from '../ui';

export interface LogRow {
  id: number | string;
  requestId: string;
  timestamp: string;
  endpoint: string;
  requestedModel?: string;
  combo?: string;
  strategy?: string;
  provider?: string;
  model?: string;
  account?: string;
  apiKeyId?: string;
  status: number;
  error?: string;
  stream: boolean;
  tokensIn: number;
  tokensOut: number;
  cost: number;
  latencyMs: number;
  fallbackAttempts: number;
  cache?: string;
  attempts?: { provider?: string; model?: string; outcome?: string; status?: number; error?: string; latencyMs?: number }[];
}

const KEEP = 500;

interface Filters {
  model: string;
  provider: string;
  status: '' | 'ok' | 'error';
}

function query(f: Filters, extra: Record<string, string> = {}): string {
  const q = new URLSearchParams(extra);
  if (f.model) q.set('model', f.model);
  if (f.provider) q.set('provider', f.provider);
  if (f.status) q.set('status', f.status);
  const s = q.toString();
  return s ? `?${s}` : '';
}

export function LogRowView({ r }: { r: LogRow }) {
  const [open, setOpen] = useState(false);
  const target = r.provider ? `${r.provider}/${r.model ?? ''}` : '—';
  return (
    <>
      <tr class={r.status >= 400 ? 'row-err' : undefined} data-request-id={r.requestId}>
        <td class="nowrap">{new Date(r.timestamp).toLocaleTimeString()}</td>
        <td>
          <Badge tone={r.status >= 500 ? 'err' : r.status >= 400 ? 'warn' : 'ok'}>{r.status}</Badge>
        </td>
        <td>{r.requestedModel ?? '—'}</td>
        <td>
          {target}
          {r.status >= 400 && r.provider && <span class="muted small"> (last tried)</span>}
          {r.fallbackAttempts > 0 && (
            <span class="muted small">
              {' '}
              after {r.fallbackAttempts} fallback{r.fallbackAttempts > 1 ? 's' : ''}
            </span>
          )}
        </td>
        <td class="num">
          {fmtInt(r.tokensIn)} / {fmtInt(r.tokensOut)}
        </td>
        <td class="num">{fmtUsd(r.cost)}</td>
        <td class="num">{fmtMs(r.latencyMs)}</td>
        <td>
          <button class="link" aria-expanded={open} onClick={() => setOpen(!open)}>
            {open ? 'Hide' : 'Details'}
          </button>
        </td>
      </tr>
      {open && (
        <tr class="detail">
          <td colSpan={8}>
            <dl class="kv">
              <dt>Request</dt>
              <dd>
                <code>{r.requestId}</code> {r.endpoint} {r.stream ? '(stream)' : ''}
              </dd>
              {r.combo && (
                <>
                  <dt>Combo</dt>
                  <dd>
                    {r.combo} ({r.strategy})
                  </dd>
                </>
              )}
              {r.apiKeyId && (
                <>
                  <dt>API key</dt>
                  <dd>{r.apiKeyId}</dd>
                </>
              )}
              {r.cache && (
                <>
                  <dt>Cache</dt>
                  <dd>{r.cache}</dd>
                </>
              )}
              {r.error && (
                <>
                  <dt>Error</dt>
                  <dd class="err-text">{r.error}</dd>
                </>
              )}
            </dl>
            {r.attempts && r.attempts.length > 0 && (
              <ol class="small">
                {r.attempts.map((a) => (
                  <li>
                    {a.provider}/{a.model}: {a.outcome}
                    {a.status ? ` ${a.status}` : ''}
                    {a.latencyMs !== undefined ? ` in ${fmtMs(a.latencyMs)}` : ''}
                    {a.error ? ` (${a.error})` : ''}
                  </li>
                ))}
              </ol>
            )}
          </td>
        </tr>
      )}
    </>
  );
}

export function LogsPage() {
  const [filters, setFilters] = useState<Filters>({ model: '', provider: '', status: '' });
  const [draft, setDraft] = useState<Filters>(filters);
  const [rows, setRows] = useState<LogRow[] | undefined>(undefined);
  const [total, setTotal] = useState(0);
  const [error, setError] = useState<string | undefined>();
  const [live, setLive] = useState<'connecting' | 'live' | 'paused' | 'reconnecting'>('connecting');
  const [paused, setPaused] = useState(false);

  useEffect(() => {
    let alive = true;
    setRows(undefined);
    api<{ total: number; items: LogRow[] }>(`/api/usage/request-logs${query(filters, { limit: '100' })}`)
      .then((r) => {
        if (!alive) return;
        setRows(r.items);
        setTotal(r.total);
        setError(undefined);
      })
      .catch((e: Error) => alive && setError(e.message));
    return () => {
      alive = false;
    };
  }, [filters]);

  useEffect(() => {
    if (paused) {
      setLive('paused');
      return;
    }
    const es = new EventSource(`/api/usage/request-logs/stream${query(filters)}`);
    setLive('connecting');
    es.onopen = () => setLive('live');
    es.onerror = () => setLive('reconnecting');
    es.addEventListener('log', (ev) => {
      const row = JSON.parse((ev as MessageEvent<string>).data) as LogRow;
      setRows((prev) => [row, ...(prev ?? [])].slice(0, KEEP));
      setTotal((t) => t + 1);
    });
    return () => es.close();
  }, [filters, paused]);

  const apply = (e: Event) => {
    e.preventDefault();
    setFilters({ ...draft });
  };
  const field = (k: 'model' | 'provider') => (e: Event) => setDraft({ ...draft, [k]: (e.target as HTMLInputElement).value.trim() });

  return (
    <>
      <form class="filters" onSubmit={apply} aria-label="Filter the request log">
        <label>
          Model <input value={draft.model} onInput={field('model')} placeholder="any" />
        </label>
        <label>
          Provider <input value={draft.provider} onInput={field('provider')} placeholder="any" />
        </label>
        <label>
          Status{' '}
          <select value={draft.status} onChange={(e) => setDraft({ ...draft, status: (e.target as HTMLSelectElement).value as Filters['status'] })}>
            <option value="">any</option>
            <option value="ok">ok</option>
            <option value="error">error</option>
          </select>
        </label>
        <button type="submit">Apply</button>
      </form>
      <Card
        title="Requests"
        actions={
          <>
            <span class="live" role="status" aria-live="polite">
              <span class={`dot ${live}`} aria-hidden="true" />
              {live}
            </span>
            <button onClick={() => setPaused(!paused)} aria-pressed={paused}>
              {paused ? 'Resume' : 'Pause'}
            </button>
          </>
        }
      >
        {error && (
          <p class="note err" role="alert">
            {error}
          </p>
        )}
        {rows === undefined && !error && <p class="muted">Loading…</p>}
        {rows && (
          <>
            <p class="muted small">
              {fmtInt(total)} matching requests; the latest {Math.min(rows.length, KEEP)} shown.
            </p>
            <Table label="Request log" head={['Time', 'Status', 'Requested', 'Served by', 'Tokens in/out', 'Cost', 'Latency', '']} empty="No requests yet. They appear here as they finish.">
              {rows.map((r) => (
                <LogRowView key={r.id} r={r} />
              ))}
            </Table>
          </>
        )}
      </Card>
    </>
  );
}
