// Usage and cost over time (GET /api/usage/history), charted with uPlot, split by provider and model.
import { useMemo, useState } from 'preact/hooks';
import { Chart, type Series } from '../chart';
import { Card, fmtInt, fmtUsd, Loading, Stat, Table, useApi } from '../ui';

interface Bucket {
  period: string;
  group?: string;
  requests: number;
  errors: number;
  tokensIn: number;
  tokensOut: number;
  cost: number;
  avgLatencyMs: number;
}

const RANGES = {
  '24h': { days: 1, period: 'hour', step: 3600_000 },
  '7d': { days: 7, period: 'day', step: 86400_000 },
  '30d': { days: 30, period: 'day', step: 86400_000 },
} as const;
type Range = keyof typeof RANGES;

/** `2026-01-02` or `2026-01-02T03:00:00Z` to epoch seconds (UTC, as the API groups). */
function periodTime(p: string): number {
  return Date.parse(p.length === 10 ? `${p}T00:00:00Z` : p) / 1000;
}

/** Every period of the range, so quiet hours show as zero instead of a line across them. */
function axis(range: Range): number[] {
  const { days, step } = RANGES[range];
  const now = Date.now();
  const last = Math.floor(now / step) * step;
  const out: number[] = [];
  for (let t = last - (days * 86400_000 - step); t <= last; t += step) out.push(t / 1000);
  return out;
}

function totalsBy(buckets: Bucket[]): { group: string; requests: number; errors: number; tokens: number; cost: number }[] {
  const m = new Map<string, { group: string; requests: number; errors: number; tokens: number; cost: number }>();
  for (const b of buckets) {
    const g = b.group || '(none)';
    const t = m.get(g) ?? { group: g, requests: 0, errors: 0, tokens: 0, cost: 0 };
    t.requests += b.requests;
    t.errors += b.errors;
    t.tokens += b.tokensIn + b.tokensOut;
    t.cost += b.cost;
    m.set(g, t);
  }
  return [...m.values()].sort((a, b) => b.cost - a.cost || b.requests - a.requests);
}

function Split({ title, rows }: { title: string; rows: ReturnType<typeof totalsBy> }) {
  return (
    <Card title={title}>
      <Table label={title} head={['Name', 'Requests', 'Errors', 'Tokens', 'Cost']} empty="No requests in this range.">
        {rows.map((r) => (
          <tr>
            <td>{r.group}</td>
            <td class="num">{fmtInt(r.requests)}</td>
            <td class="num">{fmtInt(r.errors)}</td>
            <td class="num">{fmtInt(r.tokens)}</td>
            <td class="num">{fmtUsd(r.cost)}</td>
          </tr>
        ))}
      </Table>
    </Card>
  );
}

export function UsagePage() {
  const [range, setRange] = useState<Range>('24h');
  const { days, period } = RANGES[range];
  const all = useApi<{ totals: any; history: Bucket[] }>(`/api/usage/history?days=${days}&period=${period}`, 60_000);
  const byProvider = useApi<{ history: Bucket[] }>(`/api/usage/history?days=${days}&period=${period}&groupBy=provider`, 60_000);
  const byModel = useApi<{ history: Bucket[] }>(`/api/usage/history?days=${days}&period=${period}&groupBy=model`, 60_000);

  const charts = useMemo(() => {
    if (!all.data) return undefined;
    const times = axis(range);
    const index = new Map(times.map((t, i) => [t, i]));
    const col = () => times.map(() => 0 as number | null);
    const req = col(), err = col(), cost = col(), tin = col(), tout = col(), lat = times.map(() => null as number | null);
    for (const b of all.data.history) {
      const i = index.get(periodTime(b.period));
      if (i === undefined) continue;
      req[i] = b.requests;
      err[i] = b.errors;
      cost[i] = b.cost;
      tin[i] = b.tokensIn;
      tout[i] = b.tokensOut;
      lat[i] = b.avgLatencyMs;
    }
    const usd = (v: number) => fmtUsd(v);
    const n = (v: number) => fmtInt(v);
    const providers = totalsBy(byProvider.data?.history ?? []).slice(0, 6).map((p) => p.group);
    const perProvider: Series[] = providers.map((p, k) => {
      const v = col();
      for (const b of byProvider.data?.history ?? []) {
        if ((b.group || '(none)') !== p) continue;
        const i = index.get(periodTime(b.period));
        if (i !== undefined) v[i] = b.cost;
      }
      return { label: p, values: v, color: k, fmt: usd };
    });
    return {
      times,
      requests: [
        { label: 'requests', values: req, fmt: n },
        { label: 'errors', values: err, color: 3, fmt: n },
      ] as Series[],
      cost: [{ label: 'cost', values: cost, color: 1, fmt: usd }] as Series[],
      tokens: [
        { label: 'tokens in', values: tin, fmt: n },
        { label: 'tokens out', values: tout, color: 2, fmt: n },
      ] as Series[],
      latency: [{ label: 'average latency', values: lat, color: 4, fmt: (v: number) => `${fmtInt(v)} ms` }] as Series[],
      perProvider,
    };
  }, [all.data, byProvider.data, range]);

  const t = all.data?.totals;
  return (
    <>
      <div class="filters" role="group" aria-label="Range">
        {(Object.keys(RANGES) as Range[]).map((r) => (
          <button aria-pressed={range === r} class={range === r ? 'primary' : undefined} onClick={() => setRange(r)}>
            Last {r}
          </button>
        ))}
      </div>
      <Loading r={all} />
      {t && (
        <div class="stats">
          <Stat label="Requests" value={fmtInt(t.requests)} hint={`${fmtInt(t.errors)} errors`} />
          <Stat label="Cost" value={fmtUsd(t.cost)} />
          <Stat label="Tokens in" value={fmtInt(t.tokensIn)} />
          <Stat label="Tokens out" value={fmtInt(t.tokensOut)} />
        </div>
      )}
      {charts && (
        <div class="charts">
          <Card>
            <Chart title="Requests" times={charts.times} series={charts.requests} whole />
          </Card>
          <Card>
            <Chart title="Cost (USD)" times={charts.times} series={charts.cost} />
          </Card>
          <Card>
            <Chart title="Tokens" times={charts.times} series={charts.tokens} whole />
          </Card>
          {charts.perProvider.length > 0 && (
            <Card>
              <Chart title="Cost per provider (USD)" times={charts.times} series={charts.perProvider} />
            </Card>
          )}
          <Card>
            <Chart title="Average latency" times={charts.times} series={charts.latency} whole />
          </Card>
        </div>
      )}
      {byProvider.data && <Split title="By provider" rows={totalsBy(byProvider.data.history)} />}
      {byModel.data && <Split title="By model" rows={totalsBy(byModel.data.history)} />}
    </>
  );
}
