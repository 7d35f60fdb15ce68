// The node monitor's console, at / of its listener: the account's nodes (status, height, version,
// uptime, relays), add and remove, live over the /polling WebSocket session. The login is the
// account's ID (the `Hash` genid issues), as on nkn.ovh; it stays in this browser until sign-out.
// It shares the gateway dashboard's look and small components.
import { render } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import '../gateway/style.css';
import { Badge, Card, fmtInt, Stat, ThemeButton } from '../gateway/ui';

interface Envelope<T = any> {
  Method: string;
  Code: number;
  Error: boolean;
  ErrMessage?: string;
  Value: T;
}

interface NodeRow {
  NodeId: number;
  Name: string;
  Ip: string;
  Height: number;
  LatestUpdate: string;
  ProposalSubmitted: number;
  RelaysPerHour: number;
  SyncState: string;
  Uptime: number;
  Version: string;
  Err?: number;
}

const ID_KEY = 'ctl-nodes-id';

/** `Code` of an answer that is no envelope: the request failed, or a proxy answered (a 502, a 503). */
const NO_ANSWER = -1;

async function call<T = any>(Method: string, Value?: Record<string, unknown>): Promise<Envelope<T>> {
  const failed = (ErrMessage: string) => ({ Method, Code: NO_ANSWER, Error: true, ErrMessage, Value: undefined as T });
  let res: Response;
  try {
    res = await fetch('/api', { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify(Value ? { Method, Value } : { Method }), credentials: 'same-origin' });
  } catch (e) {
    return failed(`The node monitor cannot be reached: ${(e as Error).message}`);
  }
  const text = await res.text();
  try {
    const env = JSON.parse(text) as Envelope<T>;
    if (env && typeof env.Code === 'number') return env;
  } catch {
    /* not an envelope */
  }
  return failed(`The server answered ${res.status}: ${text.trim().slice(0, 200) || res.statusText}`);
}

function savedId(): string {
  try {
    return localStorage.getItem(ID_KEY) ?? '';
  } catch {
    return '';
  }
}
function saveId(id: string): void {
  try {
    if (id) localStorage.setItem(ID_KEY, id);
    else localStorage.removeItem(ID_KEY);
  } catch {
    /* storage off: signed in for this page only */
  }
}

export function fmtUptime(s: number): string {
  if (!s || s < 0) return '—';
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  return d > 0 ? `${d}d ${h}h` : h > 0 ? `${h}h ${m}m` : `${m}m`;
}

function stateTone(n: NodeRow): 'ok' | 'warn' | 'err' | 'muted' {
  if (n.Err === 1 || n.Err === 3) return 'err';
  if (n.Err === 2) return 'muted';
  return n.SyncState === 'PERSIST_FINISHED' ? 'ok' : 'warn';
}

function Login({ onId }: { onId: (id: string) => void }) {
  const [id, setId] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [created, setCreated] = useState<string | undefined>();
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    const r = await call('getmynodes', { Hash: id.trim() });
    if (r.Code === 0 || r.Code === 3) onId(id.trim());
    else setError(r.Code === 254 || r.Code === 255 ? 'No account has this ID.' : (r.ErrMessage ?? `code ${r.Code}`));
  };
  const create = async () => {
    const r = await call<{ Hash: string }>('genid');
    if (r.Code === 0) {
      setCreated(r.Value.Hash);
      setId(r.Value.Hash);
    } else setError(r.ErrMessage ?? `code ${r.Code}`);
  };
  return (
    <main class="login" id="main">
      <form class="card login-card" onSubmit={submit} aria-labelledby="login-title">
        <h1 id="login-title">ctl node monitor</h1>
        <label for="account-id">Account ID</label>
        <input id="account-id" autocomplete="username" spellcheck={false} required pattern="[0-9a-f]{64}" title="64 lowercase hexadecimal characters" value={id} onInput={(e) => setId((e.target as HTMLInputElement).value)} />
        {created && (
          <p class="note ok" role="status">
            A new account: keep this ID, it is the only way back to your nodes.
          </p>
        )}
        {error && (
          <p class="note err" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="primary">
          Sign in
        </button>
        <p class="muted small">
          No ID yet?{' '}
          <button type="button" class="link" onClick={() => void create()}>
            Create an account
          </button>
        </p>
      </form>
    </main>
  );
}

type Live = 'connecting' | 'live' | 'reconnecting';
type SortKey = 'Name' | 'Ip' | 'SyncState' | 'Height' | 'Version' | 'Uptime' | 'RelaysPerHour';

/** The account's session on /polling: node lists pushed after each poll cycle and after every change. */
function useNodes(id: string): { nodes: NodeRow[] | undefined; live: Live; refresh: () => void } {
  const [nodes, setNodes] = useState<NodeRow[] | undefined>(undefined);
  const [live, setLive] = useState<Live>('connecting');
  const wsRef = useRef<WebSocket | null>(null);
  useEffect(() => {
    let closed = false;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let beat: ReturnType<typeof setInterval> | undefined;
    const load = async () => {
      const r = await call<{ List: NodeRow[] }>('getmynodes', { Hash: id });
      // No answer: not "no nodes" (the live session may still bring them).
      if (!closed && r.Code !== NO_ANSWER) setNodes(r.Code === 0 ? r.Value.List : []);
    };
    const connect = () => {
      const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/polling`);
      wsRef.current = ws;
      ws.onopen = () => {
        ws.send(JSON.stringify({ Method: 'auth', Value: { Hash: id } }));
        ws.send(JSON.stringify({ Method: 'getmynodes', Value: {} }));
        setLive('live');
        // The session's heartbeat: the server answers 2.
        beat = setInterval(() => ws.readyState === WebSocket.OPEN && ws.send('1'), 20_000);
      };
      ws.onmessage = (ev) => {
        const text = String(ev.data);
        if (text === '1') return ws.send('2');
        if (text === '2') return;
        let env: Envelope;
        try {
          env = JSON.parse(text) as Envelope;
        } catch {
          return;
        }
        if (env.Method === 'getmynodes') setNodes(env.Code === 0 ? (env.Value as { List: NodeRow[] }).List : []);
        else if (['addnodes', 'rmnodes', 'rmnodesbyip'].includes(env.Method) && (env.Code === 0 || env.Code === 2)) ws.send(JSON.stringify({ Method: 'getmynodes', Value: {} }));
      };
      ws.onclose = () => {
        if (beat) clearInterval(beat);
        if (closed) return;
        setLive('reconnecting');
        retry = setTimeout(connect, 3000);
      };
    };
    void load();
    connect();
    return () => {
      closed = true;
      if (retry) clearTimeout(retry);
      if (beat) clearInterval(beat);
      wsRef.current?.close();
    };
  }, [id]);
  return { nodes, live, refresh: () => void call<{ List: NodeRow[] }>('getmynodes', { Hash: id }).then((r) => r.Code !== NO_ANSWER && setNodes(r.Code === 0 ? r.Value.List : [])) };
}

function AddNodes({ id, onDone }: { id: string; onDone: () => void }) {
  const [name, setName] = useState('');
  const [ips, setIps] = useState('');
  const [msg, setMsg] = useState<{ ok: boolean; text: string } | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    const list = ips.split(/[\s,]+/).filter(Boolean);
    const r = await call<{ Info?: string }>('addnodes', { Hash: id, Multiple: list.length > 1, Name: name, Ip: list.join(list.length > 1 ? '\n' : '') });
    setMsg({ ok: r.Code === 0 || r.Code === 2, text: r.Code === 0 ? `Added ${list.length === 1 ? 'the node' : `${list.length} nodes`}.` : (r.ErrMessage ?? r.Value?.Info ?? `code ${r.Code}`) });
    if (r.Code === 0 || r.Code === 2) {
      setIps('');
      onDone();
    }
  };
  return (
    <Card title="Add nodes">
      <form class="form-grid" onSubmit={(e) => void submit(e)}>
        <label>
          Name (numbered when several) <input value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          IPv4 addresses (one, or several separated by spaces, commas or lines)
          <textarea rows={2} required value={ips} onInput={(e) => setIps((e.target as HTMLTextAreaElement).value)} />
        </label>
        <div>
          <button type="submit" class="primary">
            Add
          </button>
        </div>
      </form>
      {msg && (
        <p class={msg.ok ? 'note ok' : 'note err'} role={msg.ok ? 'status' : 'alert'}>
          {msg.text}
        </p>
      )}
    </Card>
  );
}

function NodesPage({ id, onSignOut }: { id: string; onSignOut: () => void }) {
  const { nodes, live, refresh } = useNodes(id);
  const [selected, setSelected] = useState<Set<number>>(new Set());
  const [sort, setSort] = useState<{ key: SortKey; desc: boolean }>({ key: 'Name', desc: false });
  const [net, setNet] = useState<any>(undefined);
  const [price, setPrice] = useState<number | undefined>(undefined);
  const [msg, setMsg] = useState<string | undefined>();
  useEffect(() => {
    void call('getnetstatus', { Hash: id }).then((r) => r.Code === 0 && setNet(r.Value));
    void call<{ usd?: number }>('getprices', { Hash: id }).then((r) => r.Code === 0 && setPrice(r.Value.usd));
  }, [id, nodes?.length]);

  const sorted = useMemo(() => {
    const list = [...(nodes ?? [])];
    const k = sort.key;
    list.sort((a, b) => {
      const x = a[k];
      const y = b[k];
      const c = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y), undefined, { numeric: true });
      return sort.desc ? -c : c;
    });
    return list;
  }, [nodes, sort]);
  const counts = useMemo(() => {
    const c = { mining: 0, syncing: 0, offline: 0, waiting: 0 };
    for (const n of nodes ?? []) {
      const t = stateTone(n);
      if (t === 'ok') c.mining++;
      else if (t === 'warn') c.syncing++;
      else if (t === 'err') c.offline++;
      else c.waiting++;
    }
    return c;
  }, [nodes]);

  const remove = async () => {
    const ids = [...selected];
    if (ids.length === 0 || !confirm(`Remove ${ids.length} node${ids.length > 1 ? 's' : ''} from this account?`)) return;
    const r = await call('rmnodes', { Hash: id, NodesId: ids });
    setMsg(r.Code === 0 ? `Removed ${ids.length} node${ids.length > 1 ? 's' : ''}.` : (r.ErrMessage ?? `code ${r.Code}`));
    setSelected(new Set());
    refresh();
  };
  const toggle = (nid: number, on: boolean) => {
    const s = new Set(selected);
    if (on) s.add(nid);
    else s.delete(nid);
    setSelected(s);
  };
  const head: [SortKey, string][] = [
    ['Name', 'Name'],
    ['Ip', 'Address'],
    ['SyncState', 'Status'],
    ['Height', 'Height'],
    ['Version', 'Version'],
    ['Uptime', 'Uptime'],
    ['RelaysPerHour', 'Relays/h'],
  ];
  return (
    <div class="shell single">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <span class="brand">ctl node monitor</span>
        <span class="spacer" />
        <span class="live" role="status" aria-live="polite">
          <span class={`dot ${live}`} aria-hidden="true" />
          {live}
        </span>
        <ThemeButton />
        <button onClick={onSignOut}>Sign out</button>
      </header>
      <main id="main" tabIndex={-1}>
        <h1>Nodes</h1>
        <div class="stats">
          <Stat label="Nodes" value={nodes ? String(nodes.length) : '…'} />
          <Stat label="Mining" value={String(counts.mining)} hint="PERSIST_FINISHED" />
          <Stat label="Syncing" value={String(counts.syncing)} />
          <Stat label="Offline or out" value={String(counts.offline)} />
          {net && <Stat label="Network height" value={fmtInt(net.last_height)} hint={`${fmtInt(net.nodes_count)} nodes`} />}
          {price !== undefined && <Stat label="Price" value={`$${price}`} />}
        </div>
        {msg && (
          <p class="note ok" role="status">
            {msg}
          </p>
        )}
        <Card
          title="Your nodes"
          actions={
            <button class="danger" disabled={selected.size === 0} onClick={() => void remove()}>
              Remove selected{selected.size > 0 ? ` (${selected.size})` : ''}
            </button>
          }
        >
          {nodes === undefined ? (
            <p class="muted">Loading…</p>
          ) : sorted.length === 0 ? (
            // Outside the table: in a table wider than a phone the sentence would be cut off.
            <p class="muted">No nodes yet: add one below.</p>
          ) : (
            <div class="table-wrap" role="region" aria-label="Nodes" tabIndex={0}>
              <table>
                <thead>
                  <tr>
                    <th scope="col">
                      <span class="sr-only">Select</span>
                    </th>
                    {head.map(([k, label]) => (
                      <th scope="col" aria-sort={sort.key === k ? (sort.desc ? 'descending' : 'ascending') : undefined}>
                        <button class="sort" onClick={() => setSort({ key: k, desc: sort.key === k ? !sort.desc : false })}>
                          {label}
                          {sort.key === k ? (sort.desc ? ' ▼' : ' ▲') : ''}
                        </button>
                      </th>
                    ))}
                    <th scope="col">Updated</th>
                  </tr>
                </thead>
                <tbody>
                  {sorted.map((n) => (
                      <tr data-node={n.Ip}>
                        <td>
                          <input type="checkbox" aria-label={`Select ${n.Name || n.Ip}`} checked={selected.has(n.NodeId)} onChange={(e) => toggle(n.NodeId, (e.target as HTMLInputElement).checked)} />
                        </td>
                        <td>{n.Name || '—'}</td>
                        <td>
                          <code>{n.Ip}</code>
                        </td>
                        <td>
                          <Badge tone={stateTone(n)}>{n.SyncState}</Badge>
                        </td>
                        <td class="num">{n.Height > 0 ? fmtInt(n.Height) : '—'}</td>
                        <td>{n.Version || '—'}</td>
                        <td class="num">{fmtUptime(n.Uptime)}</td>
                        <td class="num">{n.RelaysPerHour >= 0 ? fmtInt(n.RelaysPerHour) : '—'}</td>
                        <td class="nowrap small">{n.LatestUpdate}</td>
                      </tr>
                    ))}
                </tbody>
              </table>
            </div>
          )}
        </Card>
        <AddNodes id={id} onDone={refresh} />
      </main>
    </div>
  );
}

function App() {
  const [id, setId] = useState(savedId());
  useEffect(() => {
    document.title = 'Nodes · ctl node monitor';
  }, []);
  if (!id)
    return (
      <Login
        onId={(v) => {
          saveId(v);
          setId(v);
        }}
      />
    );
  return (
    <NodesPage
      id={id}
      onSignOut={() => {
        saveId('');
        setId('');
      }}
    />
  );
}

render(<App />, document.getElementById('app') ?? document.body);
