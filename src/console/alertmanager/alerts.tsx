/**
 * #/alerts: alert groups as the route tree makes them (or grouped by chosen labels), a matcher
 * filter applied as you type, a receiver selector, and the silenced and inhibited alerts shown
 * on request. The query string is Alertmanager's: filter={...}, receiver, silenced, inhibited.
 * Everything is fetched once (and again on a change) and filtered in the page; only the first
 * groups and the first alerts of each are drawn, with buttons for more. The first render does not
 * wait for everything (10,000 alerts are 6 MB of JSON): a first, small request asks the server for
 * just the groups drawn first (ctl's `ctl_groups`/`ctl_alerts_per_group`, with the totals in
 * headers), and the whole answer, fetched right after it, takes over once it is read.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { Banner, Chip } from '../kit/components.js';
import { localTime, relative } from '../kit/format.js';
import { hashHref, type HashRoute } from '../kit/router.js';
import { qs } from '../kit/api.js';
import { useFetch } from '../kit/data.js';
import { formatMatcher, formatMatchers, matchesAll, parseMatchers, type Matcher } from './matchers.js';
import type { Alert, AlertGroup } from './types.js';

const GROUPS_PAGE = 20;
const ALERTS_PAGE = 5;

interface ShownGroup {
  key: string;
  labels: Record<string, string>;
  receiver: string;
  alerts: Alert[];
  /** The group's alerts when `alerts` holds only its first ones (the first, small answer). */
  total?: number;
}

/** The first, small answer: the groups drawn first and the totals, for the query it was asked with. */
interface Preview {
  query: string;
  groups: ShownGroup[];
  totalGroups: number;
  totalAlerts: number;
}

/** The server-side form of the page's filter (Alertmanager's own query parameters, plus ctl's paging). */
function previewQuery(f: { matchers: Matcher[]; receiver: string; silenced: boolean; inhibited: boolean }): string {
  const pairs: Array<[string, string | number | boolean]> = [
    ['silenced', f.silenced],
    ['inhibited', f.inhibited],
  ];
  for (const m of f.matchers) pairs.push(['filter', formatMatcher(m)]);
  // A receiver that is not a regular expression filters nothing in the page: nor here.
  if (f.receiver && validRegExp(f.receiver)) pairs.push(['receiver', f.receiver]);
  pairs.push(['ctl_groups', GROUPS_PAGE], ['ctl_alerts_per_group', ALERTS_PAGE]);
  return qs(pairs);
}

function validRegExp(re: string): boolean {
  try {
    new RegExp(`^(?:${re})$`);
    return true;
  } catch {
    return false;
  }
}

async function fetchPreview(query: string): Promise<Preview | undefined> {
  const res = await fetch(`api/v2/alerts/groups${query}`, { headers: { Accept: 'application/json' }, credentials: 'same-origin' });
  const totalGroups = Number(res.headers.get('Ctl-Groups-Total'));
  const totalAlerts = Number(res.headers.get('Ctl-Alerts-Total'));
  // A server without ctl's paging (or a filter it reads otherwise): wait for the whole answer.
  if (!res.ok || !res.headers.has('Ctl-Groups-Total') || !Number.isFinite(totalGroups) || !Number.isFinite(totalAlerts)) return undefined;
  const body = (await res.json()) as Array<AlertGroup & { ctlAlertsTotal?: number }>;
  return {
    query,
    totalGroups,
    totalAlerts,
    groups: body.map((g) => ({ key: `${g.receiver.name}\u0001${sameLabels(g.labels)}`, labels: g.labels, receiver: g.receiver.name, alerts: g.alerts, total: g.ctlAlertsTotal ?? g.alerts.length })),
  };
}

function boolQuery(q: URLSearchParams, name: string, fallback: boolean): boolean {
  const v = q.get(name);
  return v === null ? fallback : v === 'true';
}

function sameLabels(a: Record<string, string>): string {
  return Object.keys(a)
    .sort()
    .map((k) => `${k}=${a[k]}`)
    .join('\u0000');
}

export function filterGroups(groups: AlertGroup[], f: { matchers: Matcher[]; receiver?: RegExp; silenced: boolean; inhibited: boolean; groupBy: string[] }): ShownGroup[] {
  const keep = (a: Alert) => {
    if (!f.silenced && a.status.silencedBy.length > 0) return false;
    if (!f.inhibited && a.status.inhibitedBy.length > 0) return false;
    return matchesAll(f.matchers, a.labels);
  };
  if (f.groupBy.length === 0) {
    const out: ShownGroup[] = [];
    for (const g of groups) {
      if (f.receiver && !f.receiver.test(g.receiver.name)) continue;
      const alerts = g.alerts.filter(keep);
      if (alerts.length > 0) out.push({ key: `${g.receiver.name}\u0001${sameLabels(g.labels)}`, labels: g.labels, receiver: g.receiver.name, alerts });
    }
    return out;
  }
  // Custom grouping: each alert once, whatever routes it took.
  const seen = new Set<string>();
  const byKey = new Map<string, ShownGroup>();
  for (const g of groups) {
    if (f.receiver && !f.receiver.test(g.receiver.name)) continue;
    for (const a of g.alerts) {
      if (seen.has(a.fingerprint) || !keep(a)) continue;
      seen.add(a.fingerprint);
      const labels: Record<string, string> = {};
      for (const n of f.groupBy) if (a.labels[n] !== undefined) labels[n] = a.labels[n]!;
      const key = sameLabels(labels);
      let sg = byKey.get(key);
      if (!sg) byKey.set(key, (sg = { key, labels, receiver: '', alerts: [] }));
      sg.alerts.push(a);
    }
  }
  return [...byKey.values()].sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
}

export function AlertsPage({ route }: { route: HashRoute }) {
  const q = route.query;
  const [text, setText] = useState(() => q.get('filter') ?? '');
  const [receiver, setReceiver] = useState(() => q.get('receiver') ?? '');
  const [silenced, setSilenced] = useState(() => boolQuery(q, 'silenced', false));
  const [inhibited, setInhibited] = useState(() => boolQuery(q, 'inhibited', false));
  const [groupBy, setGroupBy] = useState(() => q.get('groupBy') ?? '');
  const [limit, setLimit] = useState(GROUPS_PAGE);
  const input = useRef<HTMLInputElement>(null);

  // A link followed while the page is open (a notification's, a chip's) sets the filter again.
  const linked = q.toString();
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    setText(q.get('filter') ?? '');
    setReceiver(q.get('receiver') ?? '');
    setSilenced(boolQuery(q, 'silenced', false));
    setInhibited(boolQuery(q, 'inhibited', false));
    setGroupBy(q.get('groupBy') ?? '');
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [linked]);

  // The first, small answer (route grouping only), then the whole one.
  const [preview, setPreview] = useState<Preview | undefined>();
  const [previewDone, setPreviewDone] = useState(() => (q.get('groupBy') ?? '') !== '');
  useEffect(() => {
    if (previewDone) return;
    let matchers: Matcher[] = [];
    try {
      matchers = parseMatchers(q.get('filter') ?? '');
    } catch {
      /* the whole answer shows the error */
    }
    fetchPreview(previewQuery({ matchers, receiver: q.get('receiver') ?? '', silenced: boolQuery(q, 'silenced', false), inhibited: boolQuery(q, 'inhibited', false) }))
      .then(setPreview, () => undefined)
      .finally(() => setPreviewDone(true));
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  const groups = useFetch<AlertGroup[]>(previewDone ? 'api/v2/alerts/groups' : null);
  const receivers = useFetch<Array<{ name: string }>>('api/v2/receivers');

  const parsed = useMemo(() => {
    try {
      return { matchers: parseMatchers(text), error: undefined };
    } catch (e) {
      return { matchers: undefined, error: (e as Error).message };
    }
  }, [text]);
  // While the text does not parse, the last filter that did stays applied.
  const lastGood = useRef<Matcher[]>([]);
  if (parsed.matchers) lastGood.current = parsed.matchers;
  const matchers = parsed.matchers ?? lastGood.current;

  const receiverRe = useMemo(() => {
    if (!receiver) return undefined;
    try {
      return new RegExp(`^(?:${receiver})$`);
    } catch {
      return undefined;
    }
  }, [receiver]);
  const groupByList = useMemo(() => groupBy.split(',').map((s) => s.trim()).filter(Boolean), [groupBy]);

  const shown = useMemo(
    () => (groups.data ? filterGroups(groups.data, { matchers, receiver: receiverRe, silenced, inhibited, groupBy: groupByList }) : []),
    [groups.data, matchers, receiverRe, silenced, inhibited, groupByList],
  );
  // Until the whole answer is read, the first one stands in while it answers the current filter.
  const early = !groups.data && preview && !groupByList.length && preview.query === previewQuery({ matchers, receiver, silenced, inhibited }) ? preview : undefined;
  const total = useMemo(() => (early ? early.totalAlerts : shown.reduce((n, g) => n + g.alerts.length, 0)), [shown, early]);
  const groupTotal = early ? early.totalGroups : shown.length;
  const drawn = early ? early.groups : shown;
  // Nothing shown (a notification's link after its alerts were silenced, say): how many the
  // Silenced and Inhibited toggles hide.
  const hidden = useMemo(() => {
    if (!groups.data || total > 0 || (silenced && inhibited)) return 0;
    // Grouped by any label: each alert counted once, whatever routes it took.
    const all = filterGroups(groups.data, { matchers, receiver: receiverRe, silenced: true, inhibited: true, groupBy: ['alertname'] });
    return all.reduce((n, g) => n + g.alerts.length, 0);
  }, [groups.data, total, matchers, receiverRe, silenced, inhibited]);

  // Keep the address in step (replaceState: no history entry per key typed).
  useEffect(() => {
    const pairs: Array<[string, string]> = [
      ['silenced', String(silenced)],
      ['inhibited', String(inhibited)],
      ['active', 'true'],
    ];
    if (matchers.length > 0) pairs.push(['filter', formatMatchers(matchers)]);
    if (receiver) pairs.push(['receiver', receiver]);
    if (groupBy) pairs.push(['groupBy', groupBy]);
    const href = hashHref('/alerts', pairs);
    if (location.hash !== href) history.replaceState(null, '', href);
  }, [matchers, receiver, silenced, inhibited, groupBy]);

  useEffect(() => setLimit(GROUPS_PAGE), [matchers, receiver, silenced, inhibited, groupBy]);

  // "/" focuses the filter.
  useEffect(() => {
    const on = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement;
      if (e.key === '/' && !e.ctrlKey && !e.metaKey && !/^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName)) {
        e.preventDefault();
        input.current?.focus();
      }
    };
    addEventListener('keydown', on);
    return () => removeEventListener('keydown', on);
  }, []);

  const addMatcher = (name: string, value: string) => {
    const m = formatMatcher({ name, type: '=', value });
    if (matchers.some((x) => formatMatcher(x) === m)) return;
    setText(formatMatchers([...matchers, { name, type: '=', value }]));
  };
  const removeMatcher = (i: number) => setText(matchers.length === 1 ? '' : formatMatchers(matchers.filter((_, j) => j !== i)));

  const labelNames = useMemo(() => {
    const names = new Set<string>();
    for (const g of groups.data ?? []) {
      for (const a of g.alerts.slice(0, 50)) for (const n of Object.keys(a.labels)) names.add(n);
      if (names.size > 200) break;
    }
    return [...names].sort();
  }, [groups.data]);

  return (
    <section aria-labelledby="alerts-h">
      <h1 id="alerts-h">Alerts</h1>
      <div class="filterbar">
        <div class="row">
          <label for="filter" class="sr-only">
            Filter (matchers)
          </label>
          <input
            id="filter"
            ref={input}
            class="grow mono"
            type="search"
            autoComplete="off"
            spellcheck={false}
            placeholder='Filter: severity="page", alertname=~"Disk.*"   (press / to focus)'
            value={text}
            aria-invalid={parsed.error ? true : undefined}
            aria-describedby={parsed.error ? 'filter-error' : undefined}
            onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)}
          />
          <label>
            Receiver{' '}
            <select value={receiver} onChange={(e) => setReceiver((e.currentTarget as HTMLSelectElement).value)}>
              <option value="">All</option>
              {(receivers.data ?? []).map((r) => (
                <option key={r.name} value={r.name}>
                  {r.name}
                </option>
              ))}
              {receiver && !(receivers.data ?? []).some((r) => r.name === receiver) && <option value={receiver}>{receiver}</option>}
            </select>
          </label>
          <label>
            Group by{' '}
            <input
              class="groupby"
              list="label-names"
              placeholder="route"
              value={groupBy}
              onChange={(e) => setGroupBy((e.currentTarget as HTMLInputElement).value)}
            />
          </label>
          <datalist id="label-names">
            {labelNames.map((n) => (
              <option key={n} value={n} />
            ))}
          </datalist>
          <label class="toggle">
            <input type="checkbox" checked={silenced} onChange={(e) => setSilenced((e.currentTarget as HTMLInputElement).checked)} /> Silenced
          </label>
          <label class="toggle">
            <input type="checkbox" checked={inhibited} onChange={(e) => setInhibited((e.currentTarget as HTMLInputElement).checked)} /> Inhibited
          </label>
        </div>
        {parsed.error && (
          <div id="filter-error" class="field-error">
            {parsed.error}
          </div>
        )}
        {matchers.length > 0 && (
          <div class="chips" aria-label="Active filter">
            {matchers.map((m, i) => (
              <Chip key={formatMatcher(m)} onRemove={() => removeMatcher(i)}>
                {formatMatcher(m)}
              </Chip>
            ))}
          </div>
        )}
      </div>
      <Banner error={groups.error} />
      {!groups.data && !early ? (
        // Failed before any answer: the banner says why; "Loading…" would wait forever.
        !groups.error && <p class="muted">Loading…</p>
      ) : (
        <p class="muted" data-testid="alert-count" aria-live="polite">
          {total} {total === 1 ? 'alert' : 'alerts'} in {groupTotal} {groupTotal === 1 ? 'group' : 'groups'}
        </p>
      )}
      {groups.data && total === 0 && (
        <p class="muted" data-testid="no-alerts">
          No alerts{matchers.length > 0 || receiver ? ' match this filter' : ''}.
          {hidden > 0 && ` ${hidden} silenced or inhibited ${hidden === 1 ? 'alert is' : 'alerts are'} hidden: tick Silenced or Inhibited to show ${hidden === 1 ? 'it' : 'them'}.`}
        </p>
      )}
      {drawn.slice(0, limit).map((g) => (
        <GroupCard key={g.key} group={g} onLabel={addMatcher} />
      ))}
      {groupTotal > limit && (
        <button type="button" disabled={early !== undefined} onClick={() => setLimit(limit + GROUPS_PAGE)}>
          Show {Math.min(GROUPS_PAGE, groupTotal - limit)} more groups ({groupTotal - limit} not shown)
        </button>
      )}
    </section>
  );
}

function GroupCard({ group, onLabel }: { group: ShownGroup; onLabel: (n: string, v: string) => void }) {
  const [open, setOpen] = useState(true);
  const [all, setAll] = useState(false);
  const names = Object.keys(group.labels).sort();
  const alerts = all ? group.alerts : group.alerts.slice(0, ALERTS_PAGE);
  const count = group.total ?? group.alerts.length;
  // The first, small answer holds the first alerts only: "Show all" waits for the whole one.
  const partial = count > group.alerts.length;
  return (
    <article class="card group" data-testid="alert-group">
      <header>
        <button type="button" class="fold" aria-expanded={open} aria-label={open ? 'Collapse group' : 'Expand group'} onClick={() => setOpen(!open)}>
          {open ? '▾' : '▸'}
        </button>
        {names.length === 0 && <span class="muted">(no grouping labels)</span>}
        {names.map((n) => (
          <Chip key={n} onClick={() => onLabel(n, group.labels[n]!)} title="Add to filter">
            {n}="{group.labels[n]}"
          </Chip>
        ))}
        {group.receiver && <span class="badge">receiver: {group.receiver}</span>}
        <span class="badge">{count}</span>
      </header>
      {open && (
        <div class="body">
          <ul class="list">
            {alerts.map((a) => (
              <AlertRow key={a.fingerprint} alert={a} hide={group.labels} onLabel={onLabel} />
            ))}
          </ul>
          {count > ALERTS_PAGE && (
            <button type="button" disabled={partial} onClick={() => setAll(!all)}>
              {all ? 'Show fewer' : `Show all ${count} alerts`}
            </button>
          )}
        </div>
      )}
    </article>
  );
}

function AlertRow({ alert, hide, onLabel }: { alert: Alert; hide: Record<string, string>; onLabel: (n: string, v: string) => void }) {
  const [info, setInfo] = useState(false);
  const names = Object.keys(alert.labels)
    .filter((n) => hide[n] !== alert.labels[n])
    .sort();
  const silenceHref = hashHref('/silences/new', [['filter', formatMatchers(Object.keys(alert.labels).sort().map((n) => ({ name: n, type: '=' as const, value: alert.labels[n]! })))]]);
  const annotations = Object.keys(alert.annotations ?? {}).sort();
  return (
    <li class="alert" data-testid="alert" data-fingerprint={alert.fingerprint}>
      <div class="row alert-head">
        <time dateTime={alert.startsAt} title={relative(alert.startsAt)} class="mono muted">
          {localTime(alert.startsAt)}
        </time>
        {alert.status.silencedBy.map((id) => (
          <a key={id} class="badge warn" href={hashHref(`/silences/${id}`)}>
            silenced
          </a>
        ))}
        {alert.status.inhibitedBy.length > 0 && <span class="badge warn">inhibited</span>}
        <span class="actions">
          {annotations.length > 0 && (
            <button type="button" aria-expanded={info} onClick={() => setInfo(!info)}>
              Info
            </button>
          )}
          {alert.generatorURL && /^https?:\/\//i.test(alert.generatorURL) && (
            <a class="btn" href={alert.generatorURL} target="_blank" rel="noopener noreferrer">
              Source
            </a>
          )}
          <a class="btn" href={silenceHref}>
            Silence
          </a>
        </span>
      </div>
      <div class="labels">
        {names.map((n) => (
          <Chip key={n} onClick={() => onLabel(n, alert.labels[n]!)} title="Add to filter">
            {n}="{alert.labels[n]}"
          </Chip>
        ))}
      </div>
      {info && (
        <dl class="annotations">
          {annotations.map((n) => (
            <div key={n}>
              <dt>{n}</dt>
              <dd>{alert.annotations[n]}</dd>
            </div>
          ))}
        </dl>
      )}
    </li>
  );
}
