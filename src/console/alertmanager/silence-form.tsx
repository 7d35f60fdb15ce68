/**
 * #/silences/new (prefilled from `?filter={...}`, as an alert's Silence button and notification
 * links make it) and #/silences/{id}/edit: matchers, start, duration or end, creator, comment,
 * inline validation, and a live preview of the alerts the silence would mute.
 */
import { useContext, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../kit/api.js';
import { Banner } from '../kit/components.js';
import { formatDuration, parseDuration, toLocalInput } from '../kit/format.js';
import type { HashRoute } from '../kit/router.js';
import { SILENCE_ID } from './types.js';
import { Tick, useFetch } from '../kit/data.js';
import { compile, matchesAll, parseMatchers, toApi, type MatchType, type Matcher } from './matchers.js';
import { AlertList, goToSilence } from './silences.js';
import type { Alert, Silence } from './types.js';

interface Row {
  name: string;
  value: string;
  isRegex: boolean;
  negate: boolean;
}

interface Form {
  id?: string;
  rows: Row[];
  start: string;
  duration: string;
  end: string;
  createdBy: string;
  comment: string;
}

const CREATOR_KEY = 'ctl.alertmanager.creator';
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function typeOf(r: Row): MatchType {
  return r.isRegex ? (r.negate ? '!~' : '=~') : r.negate ? '!=' : '=';
}

function rowOf(m: { name: string; type: MatchType; value: string }): Row {
  return { name: m.name, value: m.value, isRegex: m.type === '=~' || m.type === '!~', negate: m.type === '!=' || m.type === '!~' };
}

function savedCreator(): string {
  try {
    return localStorage.getItem(CREATOR_KEY) ?? '';
  } catch {
    return '';
  }
}

function newForm(filter: string | null): Form {
  let rows: Row[] = [];
  try {
    rows = parseMatchers(filter ?? '').map(rowOf);
  } catch {
    rows = [];
  }
  if (rows.length === 0) rows = [{ name: '', value: '', isRegex: false, negate: false }];
  const now = Date.now();
  return { rows, start: toLocalInput(now), duration: '2h', end: toLocalInput(now + 2 * 3600_000), createdBy: savedCreator(), comment: '' };
}

function formOf(s: Silence): Form {
  const expired = s.status.state === 'expired';
  const rows = s.matchers.map((m) => ({ name: m.name, value: m.value, isRegex: m.isRegex, negate: !(m.isEqual ?? true) }));
  if (expired) {
    // Recreate: the same matchers, from now on, for the same length of time.
    const now = Date.now();
    const len = Math.max(60_000, new Date(s.endsAt).getTime() - new Date(s.startsAt).getTime());
    return { rows, start: toLocalInput(now), duration: formatDuration(len), end: toLocalInput(now + len), createdBy: s.createdBy || savedCreator(), comment: s.comment };
  }
  const start = new Date(s.startsAt).getTime();
  const end = new Date(s.endsAt).getTime();
  return { id: s.id, rows, start: toLocalInput(start), duration: formatDuration(end - start), end: toLocalInput(end), createdBy: s.createdBy, comment: s.comment };
}

interface Checked {
  matchers?: Matcher[];
  errors: Partial<Record<'matchers' | 'start' | 'end' | 'duration' | 'createdBy' | 'comment', string>>;
  rowErrors: string[];
}

function check(f: Form): Checked {
  const errors: Checked['errors'] = {};
  const rowErrors: string[] = [];
  const matchers: Matcher[] = [];
  f.rows.forEach((r, i) => {
    if (!LABEL_NAME.test(r.name)) {
      rowErrors[i] = r.name === '' ? 'Enter a label name.' : `"${r.name}" is not a valid label name.`;
      return;
    }
    try {
      matchers.push(compile(typeOf(r), r.name, r.value));
    } catch (e) {
      rowErrors[i] = (e as Error).message;
    }
  });
  if (f.rows.length === 0) errors.matchers = 'A silence needs at least one matcher.';
  else if (rowErrors.length === 0 && matchers.every((m) => matchesAll([m], {}))) errors.matchers = 'At least one matcher must not match the empty string (the silence would mute every alert).';
  const start = new Date(f.start).getTime();
  const end = new Date(f.end).getTime();
  if (!Number.isFinite(start)) errors.start = 'Enter a start time.';
  if (!Number.isFinite(end)) errors.end = 'Enter an end time.';
  else if (Number.isFinite(start) && end <= start) errors.end = 'The end must be after the start.';
  else if (end <= Date.now()) errors.end = 'The end must be in the future.';
  if (Number.isNaN(parseDuration(f.duration))) errors.duration = 'A duration such as 2h, 1d or 1h30m.';
  if (f.createdBy.trim() === '') errors.createdBy = 'Enter who creates the silence.';
  if (f.comment.trim() === '') errors.comment = 'Say why (the comment is required).';
  return { matchers: rowErrors.length === 0 ? matchers : undefined, errors, rowErrors };
}

export function SilenceFormPage({ route, id }: { route: HashRoute; id?: string }) {
  const wellFormed = id === undefined || SILENCE_ID.test(id);
  const existing = useFetch<Silence>(id && wellFormed ? `api/v2/silence/${encodeURIComponent(id)}` : null);
  const [form, setForm] = useState<Form | undefined>(() => (id ? undefined : newForm(route.query.get('filter'))));
  // A link whose filter does not read (a notification template's typo): say so, not an empty form.
  const linkError = useMemo(() => {
    const filter = id ? null : route.query.get('filter');
    if (!filter) return undefined;
    try {
      parseMatchers(filter);
      return undefined;
    } catch (e) {
      return `The link's filter ${filter} could not be read: ${(e as Error).message}`;
    }
  }, [id, route]);
  useEffect(() => {
    if (id && existing.data && !form) setForm(formOf(existing.data));
  }, [id, existing.data, form]);
  if (id && !form) {
    return (
      <section>
        <h1>Edit silence</h1>
        {!wellFormed || (existing.error instanceof ApiError && existing.error.status === 404) ? (
          <p class="muted" role="status">
            No silence with ID <code>{id}</code>. <a href="#/silences">All silences</a>
          </p>
        ) : existing.error ? (
          <Banner error={existing.error} />
        ) : (
          <p class="muted">Loading…</p>
        )}
      </section>
    );
  }
  return <SilenceForm initial={form!} title={form?.id ? 'Edit silence' : 'New silence'} linkError={linkError} />;
}

function SilenceForm({ initial, title, linkError }: { initial: Form; title: string; linkError?: string }) {
  const formRef = useRef<HTMLFormElement>(null);
  // After a refused submit, the keyboard goes to the first field that needs fixing.
  const [focusInvalid, setFocusInvalid] = useState(0);
  useEffect(() => {
    const form = formRef.current;
    const first = focusInvalid && form?.querySelector('.field-error');
    if (!form || !first) return;
    const fields = [...form.querySelectorAll<HTMLElement>('input, textarea, select')];
    const before = fields.filter((el) => (el as HTMLInputElement).type !== 'checkbox' && el.compareDocumentPosition(first) & Node.DOCUMENT_POSITION_FOLLOWING);
    // The first empty field before the message in its part of the form (a matcher row's name, then
    // its value; the creator), else the field right before it (a value that is no regex).
    const empty = before.find((el) => !(el as HTMLInputElement).value && el.closest('.matcher-row') === first.closest('.matcher-row'));
    (empty ?? before[before.length - 1])?.focus();
  }, [focusInvalid]);
  const { bump } = useContext(Tick);
  const [f, setF] = useState(initial);
  const [submitted, setSubmitted] = useState(false);
  const [touched, setTouched] = useState<Record<string, boolean>>({});
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const alerts = useFetch<Alert[]>('api/v2/alerts');
  const checked = useMemo(() => check(f), [f]);
  const show = (k: string) => submitted || touched[k];
  const touch = (k: string) => setTouched((t) => (t[k] ? t : { ...t, [k]: true }));

  const preview = useMemo(() => {
    if (!checked.matchers || checked.matchers.length === 0 || !alerts.data) return undefined;
    const ms = checked.matchers;
    return alerts.data.filter((a) => matchesAll(ms, a.labels));
  }, [checked.matchers, alerts.data]);

  const setRow = (i: number, patch: Partial<Row>) => setF({ ...f, rows: f.rows.map((r, j) => (j === i ? { ...r, ...patch } : r)) });
  const setStart = (start: string) => {
    const d = parseDuration(f.duration);
    const t = new Date(start).getTime();
    setF({ ...f, start, end: Number.isFinite(t) && !Number.isNaN(d) ? toLocalInput(t + d) : f.end });
  };
  const setDuration = (duration: string) => {
    const d = parseDuration(duration);
    const t = new Date(f.start).getTime();
    setF({ ...f, duration, end: Number.isFinite(t) && !Number.isNaN(d) ? toLocalInput(t + d) : f.end });
  };
  const setEnd = (end: string) => {
    const t = new Date(end).getTime();
    const s = new Date(f.start).getTime();
    setF({ ...f, end, duration: Number.isFinite(t) && Number.isFinite(s) && t > s ? formatDuration(t - s) : f.duration });
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    setSubmitted(true);
    if (!checked.matchers || Object.keys(checked.errors).length > 0) {
      setFocusInvalid((n) => n + 1);
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      const body = {
        ...(f.id ? { id: f.id } : {}),
        matchers: checked.matchers.map(toApi),
        startsAt: new Date(f.start).toISOString(),
        endsAt: new Date(f.end).toISOString(),
        createdBy: f.createdBy.trim(),
        comment: f.comment.trim(),
      };
      const r = await api<{ silenceID: string }>('api/v2/silences', { method: 'POST', json: body });
      try {
        localStorage.setItem(CREATOR_KEY, body.createdBy);
      } catch {
        /* storage off */
      }
      bump();
      goToSilence(r.silenceID);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const err = (k: keyof Checked['errors']) =>
    show(k) && checked.errors[k] ? (
      <div class="field-error" id={`err-${k}`}>
        {checked.errors[k]}
      </div>
    ) : null;

  return (
    <section aria-labelledby="form-h">
      <h1 id="form-h">{title}</h1>
      {linkError && (
        <p class="field-error" role="alert">
          {linkError}
        </p>
      )}
      <form class="silence-form" ref={formRef} onSubmit={submit} noValidate>
        <fieldset>
          <legend>Matchers</legend>
          {f.rows.map((r, i) => (
            <div class="matcher-row" key={i} data-testid="matcher-row">
              <input
                aria-label={`Matcher ${i + 1} label name`}
                class="mono"
                placeholder="label"
                value={r.name}
                onInput={(e) => setRow(i, { name: (e.currentTarget as HTMLInputElement).value })}
                onBlur={() => touch(`row${i}`)}
              />
              <span class="op mono" aria-hidden="true">
                {typeOf(r)}
              </span>
              <input
                aria-label={`Matcher ${i + 1} value`}
                class="mono grow"
                placeholder="value"
                value={r.value}
                onInput={(e) => setRow(i, { value: (e.currentTarget as HTMLInputElement).value })}
                onBlur={() => touch(`row${i}`)}
              />
              <label class="toggle">
                <input type="checkbox" checked={r.isRegex} onChange={(e) => setRow(i, { isRegex: (e.currentTarget as HTMLInputElement).checked })} /> Regex
              </label>
              <label class="toggle">
                <input type="checkbox" checked={r.negate} onChange={(e) => setRow(i, { negate: (e.currentTarget as HTMLInputElement).checked })} /> Negate
              </label>
              <button type="button" aria-label={`Remove matcher ${i + 1}`} onClick={() => setF({ ...f, rows: f.rows.filter((_, j) => j !== i) })}>
                ×
              </button>
              {(submitted || touched[`row${i}`]) && checked.rowErrors[i] && <div class="field-error full">{checked.rowErrors[i]}</div>}
            </div>
          ))}
          <button type="button" onClick={() => setF({ ...f, rows: [...f.rows, { name: '', value: '', isRegex: false, negate: false }] })}>
            Add matcher
          </button>
          {err('matchers')}
        </fieldset>
        <div class="form-grid">
          <label>
            Start
            <input type="datetime-local" value={f.start} onInput={(e) => setStart((e.currentTarget as HTMLInputElement).value)} onBlur={() => touch('start')} />
            {err('start')}
          </label>
          <label>
            Duration
            <input class="mono" value={f.duration} placeholder="2h" onInput={(e) => setDuration((e.currentTarget as HTMLInputElement).value)} onBlur={() => touch('duration')} />
            {err('duration')}
          </label>
          <label>
            End
            <input type="datetime-local" value={f.end} onInput={(e) => setEnd((e.currentTarget as HTMLInputElement).value)} onBlur={() => touch('end')} />
            {err('end')}
          </label>
          <label>
            Creator
            <input value={f.createdBy} autoComplete="username" onInput={(e) => setF({ ...f, createdBy: (e.currentTarget as HTMLInputElement).value })} onBlur={() => touch('createdBy')} />
            {err('createdBy')}
          </label>
        </div>
        <label class="block">
          Comment
          <textarea value={f.comment} onInput={(e) => setF({ ...f, comment: (e.currentTarget as HTMLTextAreaElement).value })} onBlur={() => touch('comment')} />
          {err('comment')}
        </label>
        <Banner error={error} />
        <div class="row">
          <button type="submit" class="primary" disabled={busy}>
            {f.id ? 'Update' : 'Create'}
          </button>
          <a class="btn" href="#/silences">
            Cancel
          </a>
        </div>
      </form>
      <h2>
        Preview: alerts this silence mutes{' '}
        <span class="badge" data-testid="preview-count">
          {preview ? preview.length : '–'}
        </span>
      </h2>
      <Banner error={alerts.error} />
      {preview ? <AlertList alerts={preview} /> : <p class="muted">Enter valid matchers to see the alerts they match.</p>}
    </section>
  );
}
