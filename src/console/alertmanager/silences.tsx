/**
 * #/silences (tabs Active, Pending, Expired with counts, the matcher filter) and #/silences/{id}
 * (the silence and the alerts it mutes now), with View, Edit (Recreate when expired) and Expire.
 */
import { useContext, useMemo, useState } from 'preact/hooks';
import { api, ApiError } from '../kit/api.js';
import { Banner, Chip, Tabs } from '../kit/components.js';
import { localTime, relative } from '../kit/format.js';
import { hashHref, navigate, type HashRoute } from '../kit/router.js';
import { Tick, useFetch } from '../kit/data.js';
import { formatMatcher, fromApi, matchesAll, parseMatchers, type ApiMatcher, type Matcher } from './matchers.js';
import { SILENCE_ID, type Alert, type Silence } from './types.js';

type State = Silence['status']['state'];
const STATES: State[] = ['active', 'pending', 'expired'];
const TITLES: Record<State, string> = { active: 'Active', pending: 'Pending', expired: 'Expired' };

function apiMatcherText(m: ApiMatcher): string {
  const eq = m.isEqual ?? true;
  return formatMatcher({ name: m.name, type: m.isRegex ? (eq ? '=~' : '!~') : eq ? '=' : '!=', value: m.value });
}

/** Alertmanager's silence filter: the filter's matchers against the silence's matchers taken as labels. */
function silenceMatches(filter: Matcher[], s: Silence): boolean {
  if (filter.length === 0) return true;
  const labels: Record<string, string> = {};
  for (const m of s.matchers) labels[m.name] = m.value;
  return matchesAll(filter, labels);
}

function sortSilences(list: Silence[], state: State): Silence[] {
  const t = (s: string) => new Date(s).getTime();
  const by = state === 'active' ? (a: Silence, b: Silence) => t(a.endsAt) - t(b.endsAt) : state === 'pending' ? (a: Silence, b: Silence) => t(a.startsAt) - t(b.startsAt) : (a: Silence, b: Silence) => t(b.endsAt) - t(a.endsAt);
  return list.slice().sort(by);
}

export function SilencesPage({ route }: { route: HashRoute }) {
  const silences = useFetch<Silence[]>('api/v2/silences');
  const [tab, setTab] = useState<State>(() => (STATES.includes(route.query.get('state') as State) ? (route.query.get('state') as State) : 'active'));
  const [text, setText] = useState(() => route.query.get('filter') ?? '');
  const parsed = useMemo(() => {
    try {
      return { matchers: parseMatchers(text), error: undefined };
    } catch (e) {
      return { matchers: [] as Matcher[], error: (e as Error).message };
    }
  }, [text]);
  const byState = useMemo(() => {
    const out: Record<State, Silence[]> = { active: [], pending: [], expired: [] };
    for (const s of silences.data ?? []) if (silenceMatches(parsed.matchers, s)) out[s.status.state]?.push(s);
    return out;
  }, [silences.data, parsed.matchers]);
  const list = sortSilences(byState[tab], tab);
  return (
    <section aria-labelledby="silences-h">
      <div class="row">
        <h1 id="silences-h" class="grow">
          Silences
        </h1>
        <a class="btn primary" href="#/silences/new">
          New silence
        </a>
      </div>
      <div class="row">
        <label for="silence-filter" class="sr-only">
          Filter (matchers)
        </label>
        <input
          id="silence-filter"
          class="grow mono"
          type="search"
          autoComplete="off"
          spellcheck={false}
          placeholder='Filter: alertname="DiskFull"'
          value={text}
          onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)}
        />
      </div>
      {parsed.error && <div class="field-error">{parsed.error}</div>}
      <Banner error={silences.error} />
      <Tabs
        label="Silence state"
        selected={tab}
        onSelect={(id) => setTab(id as State)}
        tabs={STATES.map((s) => ({
          id: s,
          label: (
            <>
              {TITLES[s]} {silences.data && <span class="badge">{byState[s].length}</span>}
            </>
          ),
        }))}
      />
      <div role="tabpanel">
        {!silences.data ? (
          // Not known yet, or not known at all (the banner says why): not "No active silences".
          !silences.error && <p class="muted">Loading…</p>
        ) : list.length === 0 ? (
          <p class="muted">No {TITLES[tab].toLowerCase()} silences.</p>
        ) : (
          <ul class="list">
            {list.map((s) => (
              <SilenceItem key={s.id} silence={s} />
            ))}
          </ul>
        )}
      </div>
    </section>
  );
}

function ExpireButton({ id, onDone }: { id: string; onDone?: () => void }) {
  const { bump } = useContext(Tick);
  const [confirm, setConfirm] = useState(false);
  const [error, setError] = useState<unknown>();
  const expire = async () => {
    try {
      await api(`api/v2/silence/${encodeURIComponent(id)}`, { method: 'DELETE' });
      setConfirm(false);
      bump();
      onDone?.();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <>
      {confirm ? (
        <>
          <button type="button" class="danger" onClick={expire}>
            Confirm expire
          </button>
          <button type="button" onClick={() => setConfirm(false)}>
            Cancel
          </button>
        </>
      ) : (
        <button type="button" class="danger" onClick={() => setConfirm(true)}>
          Expire
        </button>
      )}
      {error !== undefined && <span class="error">{(error as Error).message}</span>}
    </>
  );
}

function SilenceItem({ silence: s }: { silence: Silence }) {
  const state = s.status.state;
  return (
    <li class="silence" data-testid="silence" data-id={s.id}>
      <div class="row">
        <span class="grow">
          {s.matchers.map((m) => (
            <Chip key={apiMatcherText(m)}>{apiMatcherText(m)}</Chip>
          ))}
        </span>
        <span class="actions">
          <a class="btn" href={hashHref(`/silences/${s.id}`)}>
            View
          </a>
          <a class="btn" href={hashHref(`/silences/${s.id}/edit`)}>
            {state === 'expired' ? 'Recreate' : 'Edit'}
          </a>
          {state !== 'expired' && <ExpireButton id={s.id} />}
        </span>
      </div>
      <div class="muted small">
        {state === 'pending' ? `Starts ${relative(s.startsAt)}` : state === 'active' ? `Ends ${relative(s.endsAt)}` : `Expired ${relative(s.endsAt)}`} · {localTime(s.startsAt)} → {localTime(s.endsAt)} ·{' '}
        {s.createdBy}
      </div>
      {s.comment && <div class="comment">{s.comment}</div>}
    </li>
  );
}

export function SilenceView({ id }: { id: string }) {
  // Silence IDs are UUIDs: another ID names no silence, and asking the API would only earn a 422.
  const wellFormed = SILENCE_ID.test(id);
  const silence = useFetch<Silence>(wellFormed ? `api/v2/silence/${encodeURIComponent(id)}` : null);
  const alerts = useFetch<Alert[]>('api/v2/alerts');
  const s = silence.data;
  const affected = useMemo(() => {
    if (!s || !alerts.data) return [];
    if (s.status.state === 'active') return alerts.data.filter((a) => a.status.silencedBy.includes(s.id));
    if (s.status.state === 'expired') return [];
    const ms = s.matchers.map(fromApi);
    return alerts.data.filter((a) => matchesAll(ms, a.labels));
  }, [s, alerts.data]);
  return (
    <section aria-labelledby="silence-h">
      <h1 id="silence-h">Silence</h1>
      {!wellFormed || (silence.error instanceof ApiError && silence.error.status === 404) ? (
        <p class="muted" role="status">
          No silence with ID <code>{id}</code>. <a href="#/silences">All silences</a>
        </p>
      ) : (
        <Banner error={silence.error} />
      )}
      {s && (
        <>
          <table class="grid details">
            <tbody>
              <tr>
                <th>ID</th>
                <td class="mono">{s.id}</td>
              </tr>
              <tr>
                <th>State</th>
                <td>
                  <span class={`badge ${s.status.state === 'active' ? 'ok' : ''}`}>{s.status.state}</span>
                </td>
              </tr>
              <tr>
                <th>Matchers</th>
                <td>
                  {s.matchers.map((m) => (
                    <Chip key={apiMatcherText(m)}>{apiMatcherText(m)}</Chip>
                  ))}
                </td>
              </tr>
              <tr>
                <th>Starts</th>
                <td>
                  {localTime(s.startsAt)} <span class="muted">({relative(s.startsAt)})</span>
                </td>
              </tr>
              <tr>
                <th>Ends</th>
                <td>
                  {localTime(s.endsAt)} <span class="muted">({relative(s.endsAt)})</span>
                </td>
              </tr>
              <tr>
                <th>Created by</th>
                <td>{s.createdBy}</td>
              </tr>
              <tr>
                <th>Comment</th>
                <td class="comment">{s.comment}</td>
              </tr>
            </tbody>
          </table>
          <div class="row actions">
            <a class="btn" href={hashHref(`/silences/${s.id}/edit`)}>
              {s.status.state === 'expired' ? 'Recreate' : 'Edit'}
            </a>
            {s.status.state !== 'expired' && <ExpireButton id={s.id} />}
          </div>
          <h2>
            Affected alerts <span class="badge">{affected.length}</span>
          </h2>
          <AlertList alerts={affected} />
        </>
      )}
    </section>
  );
}

/** A compact list of alerts (first 100), for the silence view and the form's preview. */
export function AlertList({ alerts, limit = 100 }: { alerts: Alert[]; limit?: number }) {
  if (alerts.length === 0) return <p class="muted">No alerts.</p>;
  return (
    <>
      <ul class="list">
        {alerts.slice(0, limit).map((a) => (
          <li key={a.fingerprint} data-testid="preview-alert">
            {Object.keys(a.labels)
              .sort()
              .map((n) => (
                <Chip key={n}>
                  {n}="{a.labels[n]}"
                </Chip>
              ))}
          </li>
        ))}
      </ul>
      {alerts.length > limit && <p class="muted">and {alerts.length - limit} more</p>}
    </>
  );
}

export function goToSilence(id: string): void {
  navigate(hashHref(`/silences/${id}`));
}
