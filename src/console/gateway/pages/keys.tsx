// API keys: list, create (the raw key is shown once), revoke; budgets per key (set, remove).
import { useState } from 'preact/hooks';
import { api, Badge, Card, fmtTime, fmtUsd, Loading, Table, useAction, useApi } from '../ui';

const SCOPES = ['inference', 'management', 'mcp', 'admin', 'keys'] as const;

function CreateKey({ onCreated }: { onCreated: () => void }) {
  const [name, setName] = useState('');
  const [models, setModels] = useState('*');
  const [scopes, setScopes] = useState<string[]>(['inference']);
  const [rpm, setRpm] = useState('');
  const [created, setCreated] = useState<{ key: string; name: string } | null>(null);
  const [run, note] = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void run('Key created.', async () => {
      const body: Record<string, unknown> = { name, models: models.split(',').map((s) => s.trim()).filter(Boolean), scopes };
      if (rpm) body.rpm = Number(rpm);
      const r = await api<{ key: string; name: string }>('/api/keys', { method: 'POST', body });
      setCreated({ key: r.key, name: r.name });
      setName('');
      onCreated();
    });
  };
  return (
    <Card title="New key">
      <form class="form-grid" onSubmit={submit}>
        <label>
          Name <input required value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          Models (comma-separated globs) <input value={models} onInput={(e) => setModels((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          Requests per minute <input type="number" min="1" inputMode="numeric" value={rpm} placeholder="no limit" onInput={(e) => setRpm((e.target as HTMLInputElement).value)} />
        </label>
        <fieldset>
          <legend>Scopes</legend>
          {SCOPES.map((s) => (
            <label class="check">
              <input type="checkbox" checked={scopes.includes(s)} onChange={(e) => setScopes((e.target as HTMLInputElement).checked ? [...scopes, s] : scopes.filter((x) => x !== s))} /> {s}
            </label>
          ))}
        </fieldset>
        <div>
          <button type="submit" class="primary">Create key</button>
        </div>
      </form>
      {note}
      {created && (
        <div class="note ok" role="status">
          <p>
            Key <strong>{created.name}</strong>: store it now, it is not shown again.
          </p>
          <input class="secret" readOnly value={created.key} aria-label="The new key" onFocus={(e) => (e.target as HTMLInputElement).select()} />
        </div>
      )}
    </Card>
  );
}

function Budgets({ keys }: { keys: any[] }) {
  const budgets = useApi<{ budgets: any[] }>('/api/usage/budget', 30_000);
  const [keyId, setKeyId] = useState('');
  const [daily, setDaily] = useState('');
  const [monthly, setMonthly] = useState('');
  const [run, note] = useAction();
  const names = new Map(keys.map((k) => [k.id, k.name]));
  const submit = (e: Event) => {
    e.preventDefault();
    const body: Record<string, unknown> = { apiKeyId: keyId };
    if (daily) body.dailyLimitUsd = Number(daily);
    if (monthly) body.monthlyLimitUsd = Number(monthly);
    void run('Budget saved.', () => api('/api/usage/budget', { method: 'POST', body }).then(budgets.reload));
  };
  return (
    <Card title="Budgets">
      {note}
      <Loading r={budgets} />
      {budgets.data && (
        <Table label="Budgets" head={['Key', 'Daily', 'Monthly', 'Spent this period', 'Next reset', '']} empty="No budgets.">
          {budgets.data.budgets.map((b) => (
            <tr>
              <td>{names.get(b.apiKeyId) ?? b.apiKeyId}</td>
              <td class="num">{fmtUsd(b.dailyLimitUsd)}</td>
              <td class="num">{fmtUsd(b.monthlyLimitUsd)}</td>
              <td class="num">
                {fmtUsd(b.spentUsd)} {b.exceeded && <Badge tone="err">exceeded</Badge>}
              </td>
              <td>{fmtTime(b.nextResetAt)}</td>
              <td>
                <button onClick={() => void run('Budget removed.', () => api(`/api/usage/budget?apiKeyId=${encodeURIComponent(b.apiKeyId)}`, { method: 'DELETE' }).then(budgets.reload))}>Remove</button>
              </td>
            </tr>
          ))}
        </Table>
      )}
      <form class="form-grid" onSubmit={submit} aria-label="Set a budget">
        <label>
          Key{' '}
          <select required value={keyId} onChange={(e) => setKeyId((e.target as HTMLSelectElement).value)}>
            <option value="">choose a key</option>
            {keys.map((k) => (
              <option value={k.id}>{k.name}</option>
            ))}
          </select>
        </label>
        <label>
          Daily limit (USD) <input type="number" min="0" step="0.01" value={daily} onInput={(e) => setDaily((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          Monthly limit (USD) <input type="number" min="0" step="0.01" value={monthly} onInput={(e) => setMonthly((e.target as HTMLInputElement).value)} />
        </label>
        <div>
          <button type="submit">Set budget</button>
        </div>
      </form>
    </Card>
  );
}

export function KeysPage() {
  const keys = useApi<{ keys: any[] }>('/api/keys', 30_000);
  const [run, note] = useAction();
  return (
    <>
      <Card title="Keys">
        {note}
        <Loading r={keys} />
        {keys.data && (
          <Table label="API keys" head={['Name', 'Prefix', 'Models', 'Scopes', 'Status', 'Last used', '']} empty="No keys.">
            {keys.data.keys.map((k) => (
              <tr data-key={k.id}>
                <td>
                  <strong>{k.name}</strong>
                  <div class="muted small">{k.id}</div>
                </td>
                <td><code>{k.prefix}…</code></td>
                <td>{k.models.join(', ')}</td>
                <td>{k.scopes.join(', ')}</td>
                <td>
                  <Badge tone={k.usable ? 'ok' : 'muted'}>{k.status}</Badge>
                  {k.rpm && <div class="muted small">{k.rpm}/min</div>}
                </td>
                <td>{fmtTime(k.lastUsedAt)}</td>
                <td>
                  {k.source === 'api' && k.status !== 'revoked' && (
                    <button
                      class="danger"
                      onClick={() => {
                        if (confirm(`Revoke the key ${k.name}? Clients using it get 401 from now on.`)) void run(`${k.name} revoked.`, () => api(`/api/keys/${encodeURIComponent(k.id)}/revoke`, { method: 'POST' }).then(keys.reload));
                      }}
                    >
                      Revoke
                    </button>
                  )}
                  {k.source === 'file' && <span class="muted small">gateway.yaml</span>}
                </td>
              </tr>
            ))}
          </Table>
        )}
      </Card>
      <CreateKey onCreated={keys.reload} />
      {keys.data && <Budgets keys={keys.data.keys} />}
    </>
  );
}
