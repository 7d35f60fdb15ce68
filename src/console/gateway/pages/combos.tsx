// Combos: each with its strategy and targets, and how each target has done (GET /api/combos/metrics).
import { Badge, Card, fmtMs, Loading, Table, useApi } from '../ui';

function pct(v: number | null | undefined): string {
  return v === null || v === undefined ? '—' : `${Math.round(v * 1000) / 10}%`;
}

export function CombosPage() {
  const combos = useApi<{ combos: any[] }>('/api/combos', 15_000);
  const metrics = useApi<{ combos: any[] }>('/api/combos/metrics', 15_000);
  const byName = new Map((metrics.data?.combos ?? []).map((c) => [c.name, c]));
  return (
    <Card title="Combos">
      <Loading r={combos} />
      {combos.data && (
        <Table label="Combos" head={['Combo', 'Strategy', 'Targets', 'Requests', 'Success']} empty="No combos: define them in gateway.yaml or with POST /api/combos.">
          {combos.data.combos.map((c) => {
            const m = byName.get(c.name);
            const tm = new Map((m?.targets ?? []).map((t: any) => [t.model, t]));
            return (
              <tr>
                <td>
                  <strong>{c.name}</strong> {!c.enabled && <Badge tone="muted">disabled</Badge>}
                  {c.description && <div class="muted small">{c.description}</div>}
                </td>
                <td><Badge tone="muted">{c.strategy}</Badge></td>
                <td>
                  <ol class="small">
                    {c.targets.map((t: any) => {
                      const s: any = tm.get(t.model);
                      return (
                        <li>
                          <code>{t.model}</code>
                          {t.weight !== undefined && <span class="muted"> weight {t.weight}</span>}
                          {s && s.requests > 0 && <span class="muted"> · {s.requests} req, {pct(s.successRate)} ok, p50 {fmtMs(s.p50LatencyMs)}</span>}
                        </li>
                      );
                    })}
                  </ol>
                </td>
                <td class="num">{m?.requests ?? 0}</td>
                <td class="num">{pct(m?.successRate)}</td>
              </tr>
            );
          })}
        </Table>
      )}
    </Card>
  );
}
