/**
 * What `ctl top` shows, gathered over the control socket: the daemon's listeners (Core API), alerts
 * firing by severity (alert manager), and from each component's /metrics the gateway's requests,
 * latency and breakers, the nodes by state and the posts waiting for review; the gateway's cost
 * today from its usage history. A component that does not answer is shown with its error.
 */
import { request, send } from '../client.js';
import { bucketsOf, parseMetrics, sum, type Sample } from './metrics-text.js';

export interface Listener {
  name: string;
  address: string;
  state: string;
  component: string;
  error: string;
}

export interface Snapshot {
  at: number;
  daemon?: { name: string; version: string; uptime: number; listeners: Listener[] };
  alerts?: { bySeverity: Record<string, number>; top: { name: string; severity: string; summary: string; component: string }[] };
  gateway?: { requests: number; errors: number; buckets: Map<number, number>; costToday: number; breakers: { provider: string; state: string }[] };
  nodes?: Record<string, number>;
  pipeline?: { pending: number; approved: number; failedRuns: number; unhealthySources: number };
  errors: Record<string, string>;
}

async function metricsOf(host: string): Promise<Sample[]> {
  const r = await send({ host, path: '/metrics', headers: { Accept: 'text/plain' } });
  if (r.status !== 200) throw new Error(`${host}: HTTP ${r.status}${typeof r.data === 'string' && r.data ? `: ${r.data.trim().slice(0, 120)}` : ''}`);
  return parseMetrics(r.text);
}

const startOfDayUtc = (ms: number) => {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
};

export async function collect(now = Date.now()): Promise<Snapshot> {
  const snap: Snapshot = { at: now, errors: {} };
  const tasks: Record<string, () => Promise<void>> = {
    daemon: async () => {
      const env = await request<{ metadata: { name: string; version: string; uptime_seconds: number; servers: Record<string, { name: string; bound_address: string; address: string; state: string; component: string; error?: string; component_error?: string }> } }>({ host: 'core', path: '/core/1.0' });
      const i = env.metadata;
      snap.daemon = {
        name: i.name,
        version: i.version,
        uptime: i.uptime_seconds,
        listeners: Object.values(i.servers).map((s) => ({ name: s.name, address: s.bound_address || s.address || '-', state: s.state, component: s.component, error: [s.error, s.component_error].filter(Boolean).join('; ') })),
      };
    },
    alerts: async () => {
      const list = await request<{ labels: Record<string, string>; annotations: Record<string, string> }[]>({ host: 'alertmanager', path: '/api/v2/alerts', query: { active: true, silenced: false, inhibited: false } });
      const bySeverity: Record<string, number> = {};
      for (const a of list) bySeverity[a.labels.severity ?? 'none'] = (bySeverity[a.labels.severity ?? 'none'] ?? 0) + 1;
      snap.alerts = {
        bySeverity,
        top: list.slice(0, 20).map((a) => ({ name: a.labels.alertname ?? '', severity: a.labels.severity ?? '', summary: a.annotations.summary ?? '', component: a.labels.component ?? '' })),
      };
    },
    gateway: async () => {
      const m = await metricsOf('gateway');
      const requests = sum(m, 'ctl_gateway_requests_total');
      let errors = 0;
      for (const s of m) if (s.name === 'ctl_gateway_requests_total' && Number(s.labels.status) >= 500) errors += s.value;
      const breakers = m.filter((s) => s.name === 'ctl_gateway_circuit_breaker_state' && s.value === 1).map((s) => ({ provider: s.labels.provider ?? '', state: s.labels.state ?? '' }));
      const history = await request<{ totals: { cost: number } }>({ host: 'gateway', path: '/api/usage/history', query: { since: new Date(startOfDayUtc(now)).toISOString(), period: 'day' } });
      snap.gateway = { requests, errors, buckets: bucketsOf(m, 'ctl_gateway_request_duration_seconds'), costToday: history.totals.cost, breakers };
    },
    nodes: async () => {
      const m = await metricsOf('nodes');
      const states: Record<string, number> = {};
      for (const s of m) if (s.name === 'ctl_nodes_nodes') states[s.labels.state ?? ''] = s.value;
      snap.nodes = states;
    },
    pipeline: async () => {
      const m = await metricsOf('pipeline');
      snap.pipeline = {
        pending: sum(m, 'ctl_pipeline_posts', { status: 'pending' }),
        approved: sum(m, 'ctl_pipeline_posts', { status: 'approved' }),
        failedRuns: sum(m, 'ctl_pipeline_runs_total', { status: 'failed' }),
        unhealthySources: sum(m, 'ctl_pipeline_sources', { health: 'unhealthy' }),
      };
    },
  };
  await Promise.all(
    Object.entries(tasks).map(async ([name, run]) => {
      try {
        await run();
      } catch (e) {
        snap.errors[name] = e instanceof Error ? e.message : String(e);
      }
    }),
  );
  return snap;
}
