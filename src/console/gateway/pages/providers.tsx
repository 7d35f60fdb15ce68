// Providers: each with its accounts (cool-down, backoff), its breaker (state, failures) and its
// models; test a provider, reset its breaker and cool-downs, enable or disable one the API owns.
import { useEffect } from 'preact/hooks';
import { api, Badge, Card, fmtMs, Loading, Table, useAction, useApi } from '../ui';

interface Account {
  id: string;
  name: string;
  enabled: boolean;
  available: boolean;
  rateLimitedUntil: string | null;
  backoffLevel: number;
}
interface Provider {
  id: string;
  kind: string;
  name: string;
  baseUrl: string;
  enabled: boolean;
  priority: number;
  accounts: Account[];
  models: { id: string; type: string; hidden?: boolean }[];
  source: 'file' | 'api';
}
interface Breaker {
  provider: string;
  state: string;
  failures: number;
  failureThreshold: number;
  openCycles: number;
  resetTimeoutMs: number;
}
interface Health {
  status: string;
  providerBreakers: Breaker[];
  lockouts: { provider: string; model: string; remainingMs?: number; reason?: string }[];
}

export function breakerTone(state: string | undefined): 'ok' | 'warn' | 'err' | 'muted' {
  if (!state) return 'muted';
  if (state === 'CLOSED') return 'ok';
  if (state === 'OPEN') return 'err';
  return 'warn';
}

function cooldownLeft(a: Account): number {
  return a.rateLimitedUntil ? Math.max(0, Date.parse(a.rateLimitedUntil) - Date.now()) : 0;
}

/** `focus`: a provider's ID from /dashboard/providers/{id}, marked and scrolled to. */
export function ProvidersPage({ focus }: { focus?: string } = {}) {
  const providers = useApi<{ providers: Provider[] }>('/api/providers', 5000);
  const found = focus !== undefined && providers.data?.providers.some((p) => p.id === focus);
  useEffect(() => {
    if (found) document.querySelector(`tr[data-provider="${CSS.escape(focus!)}"]`)?.scrollIntoView({ block: 'center' });
  }, [found, focus]);
  const health = useApi<Health>('/api/monitoring/health', 5000);
  const [run, note] = useAction();
  const breakers = new Map((health.data?.providerBreakers ?? []).map((b) => [b.provider, b]));
  const refresh = () => {
    providers.reload();
    health.reload();
  };

  return (
    <>
      {note}
      {focus !== undefined && providers.data && !found && (
        <p class="note warn" role="status">
          No provider has the ID <code>{focus}</code>.
        </p>
      )}
      <Card
        title="Providers"
        actions={
          <button onClick={() => void run('Every breaker is closed and every cool-down cleared.', () => api('/api/resilience/reset', { method: 'POST', body: { breakers: true, cooldowns: true } }).then(refresh))}>
            Reset all breakers
          </button>
        }
      >
        <Loading r={providers} />
        {providers.data && (
          <Table label="Providers" head={['Provider', 'Kind', 'State', 'Breaker', 'Accounts', 'Models', 'Actions']} empty="No providers: add one in gateway.yaml or with POST /api/providers.">
            {providers.data.providers.map((p) => {
              const b = breakers.get(p.id);
              return (
                <tr data-provider={p.id} class={p.id === focus ? 'target' : undefined} aria-current={p.id === focus ? 'true' : undefined}>
                  <td>
                    <strong>{p.name}</strong>
                    {p.name !== p.id && <div class="muted">{p.id}</div>}
                    <div class="muted small">{p.baseUrl}</div>
                  </td>
                  <td>{p.kind}</td>
                  <td>{p.enabled ? <Badge tone="ok">enabled</Badge> : <Badge tone="muted">disabled</Badge>}</td>
                  <td>
                    <Badge tone={breakerTone(b?.state)}>{b?.state ?? '—'}</Badge>
                    {b && b.failures > 0 && (
                      <div class="muted small">
                        {b.failures}/{b.failureThreshold} failures
                      </div>
                    )}
                  </td>
                  <td>
                    <ul class="plain">
                      {p.accounts.map((a) => {
                        const left = cooldownLeft(a);
                        return (
                          <li>
                            {a.name}{' '}
                            {!a.enabled ? <Badge tone="muted">off</Badge> : left > 0 ? <Badge tone="warn">cool-down {fmtMs(left)}</Badge> : <Badge tone="ok">ready</Badge>}
                            {a.backoffLevel > 0 && <span class="muted small"> backoff {a.backoffLevel}</span>}
                          </li>
                        );
                      })}
                    </ul>
                  </td>
                  <td>
                    <details>
                      <summary>{p.models.length} models</summary>
                      <ul class="plain small">
                        {p.models.map((m) => (
                          <li>
                            {m.id} <span class="muted">{m.type}</span>
                          </li>
                        ))}
                      </ul>
                    </details>
                  </td>
                  <td class="actions">
                    <button
                      onClick={() =>
                        void run(`Tested ${p.id}.`, async () => {
                          const r = await api<{ ok?: boolean; success?: boolean; error?: string; latencyMs?: number }>(`/api/providers/${encodeURIComponent(p.id)}/test`, { method: 'POST', body: {} });
                          if (r.ok === false || r.success === false) throw new Error(`${p.id}: ${r.error ?? 'test failed'}`);
                        })
                      }
                    >
                      Test
                    </button>
                    <button onClick={() => void run(`Breaker and cool-downs of ${p.id} reset.`, () => api('/api/resilience/reset', { method: 'POST', body: { provider: p.id, breakers: true, cooldowns: true } }).then(refresh))}>Reset</button>
                    {p.source === 'api' && (
                      <button onClick={() => void run(`${p.id} ${p.enabled ? 'disabled' : 'enabled'}.`, () => api(`/api/providers/${encodeURIComponent(p.id)}`, { method: 'PATCH', body: { enabled: !p.enabled } }).then(refresh))}>
                        {p.enabled ? 'Disable' : 'Enable'}
                      </button>
                    )}
                  </td>
                </tr>
              );
            })}
          </Table>
        )}
      </Card>
      <Card title="Model lock-outs">
        <Loading r={health} />
        {health.data && (
          <Table label="Model lock-outs" head={['Provider', 'Model', 'Remaining', 'Reason']} empty="No model is locked out.">
            {health.data.lockouts.map((l) => (
              <tr>
                <td>{l.provider}</td>
                <td>{l.model}</td>
                <td>{fmtMs(l.remainingMs)}</td>
                <td>{l.reason ?? ''}</td>
              </tr>
            ))}
          </Table>
        )}
      </Card>
    </>
  );
}
