// Overview: health, providers and breakers, today's requests and cost, the latest requests.
import { Badge, Card, fmtInt, fmtUsd, Loading, Stat, Table, useApi } from '../ui';
import { breakerTone } from './providers';
import { LogRowView, type LogRow } from './logs';

export function HomePage() {
  const health = useApi<any>('/api/monitoring/health', 10_000);
  const usage = useApi<any>('/api/usage/history?period=hour&days=1', 30_000);
  const logs = useApi<{ items: LogRow[] }>('/api/usage/request-logs?limit=10', 10_000);
  const h = health.data;
  const t = usage.data?.totals;
  const open = (h?.providerBreakers ?? []).filter((b: any) => b.state !== 'CLOSED');
  // Not known (the API failed): a dash and the reason, not "…" for ever.
  const none = (r: { error?: string }) => (r.error ? '—' : '…');
  return (
    <>
      <div class="stats">
        <Stat label="Gateway" value={h ? <Badge tone={h.status === 'healthy' ? 'ok' : 'warn'}>{h.status}</Badge> : none(health)} hint={h ? `version ${h.version}` : health.error} />
        <Stat label="Providers active" value={h ? `${h.activeCount}/${h.configuredCount}` : none(health)} />
        <Stat label="Breakers not closed" value={h ? String(open.length) : none(health)} />
        <Stat label="Requests (24 h)" value={t ? fmtInt(t.requests) : none(usage)} hint={t ? `${fmtInt(t.errors)} errors` : usage.error} />
        <Stat label="Cost (24 h)" value={t ? fmtUsd(t.cost) : none(usage)} />
        <Stat label="Tokens (24 h)" value={t ? fmtInt(t.tokensIn + t.tokensOut) : none(usage)} />
      </div>
      {open.length > 0 && (
        <Card title="Breakers">
          <Table label="Breakers not closed" head={['Provider', 'State', 'Failures']}>
            {open.map((b: any) => (
              <tr>
                <td><a href="/dashboard/providers">{b.provider}</a></td>
                <td><Badge tone={breakerTone(b.state)}>{b.state}</Badge></td>
                <td>{b.failures}</td>
              </tr>
            ))}
          </Table>
        </Card>
      )}
      <Card title="Latest requests" actions={<a href="/dashboard/logs">Open the request log</a>}>
        <Loading r={logs} />
        {logs.data && (
          <Table label="Latest requests" head={['Time', 'Status', 'Requested', 'Served by', 'Tokens in/out', 'Cost', 'Latency', '']} empty="No requests yet.">
            {logs.data.items.map((r) => <LogRowView key={r.id} r={r} />)}
          </Table>
        )}
      </Card>
    </>
  );
}
