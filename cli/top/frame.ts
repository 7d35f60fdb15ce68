/**
 * One frame of `ctl top` as lines (text and a colour hint), from the latest snapshot and the one
 * before it (rates and latency quantiles are over the time between them; on the first frame,
 * since the daemon started). Panes: overview, alerts, gateway, listeners.
 */
import { bucketDelta, histogramQuantile } from './metrics-text.js';
import type { Snapshot } from './snapshot.js';

export const PANES = ['overview', 'alerts', 'gateway', 'listeners'] as const;
export type Pane = (typeof PANES)[number];

export interface Line {
  text: string;
  color?: 'red' | 'yellow' | 'green' | 'cyan';
  bold?: boolean;
  dim?: boolean;
}

const SEVERITY_ORDER = ['critical', 'page', 'error', 'warning', 'info', 'none'];

function duration(s: number): string {
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  return d > 0 ? `${d}d${h}h` : h > 0 ? `${h}h${m}m` : `${m}m${Math.floor(s % 60)}s`;
}

const ms = (seconds: number | undefined) => (seconds === undefined ? '-' : `${(seconds * 1000).toFixed(seconds < 0.01 ? 1 : 0)} ms`);

function latency(now: Snapshot, prev: Snapshot | undefined): { p50?: number; p95?: number; rate?: number } {
  const g = now.gateway;
  if (!g) return {};
  const pg = prev?.gateway;
  const dt = prev ? (now.at - prev.at) / 1000 : 0;
  const delta = bucketDelta(g.buckets, pg?.buckets);
  // No request since the last frame: show the figures since start rather than nothing.
  const use = (delta.get(Infinity) ?? 0) > 0 ? delta : g.buckets;
  return {
    p50: histogramQuantile(0.5, use),
    p95: histogramQuantile(0.95, use),
    rate: pg && dt > 0 ? Math.max(0, g.requests - pg.requests) / dt : undefined,
  };
}

function errorLine(name: string, now: Snapshot): Line[] {
  return now.errors[name] ? [{ text: `${name}: ${now.errors[name]}`, color: 'red' }] : [];
}

function overview(now: Snapshot, prev: Snapshot | undefined): Line[] {
  const lines: Line[] = [];
  const d = now.daemon;
  if (d) {
    const up = d.listeners.filter((l) => l.component === 'running' && (l.state === 'listening' || l.state === 'socket-only')).length;
    lines.push({ text: `ctl ${d.name} ${d.version}  up ${duration(d.uptime)}  servers ${up}/${d.listeners.length} up`, bold: true, color: up === d.listeners.length ? undefined : 'yellow' });
  } else lines.push(...errorLine('daemon', now));
  const a = now.alerts;
  if (a) {
    const total = Object.values(a.bySeverity).reduce((x, y) => x + y, 0);
    const parts = Object.keys(a.bySeverity)
      .sort((x, y) => (SEVERITY_ORDER.indexOf(x) + 99) % 99 - (SEVERITY_ORDER.indexOf(y) + 99) % 99 || x.localeCompare(y))
      .map((s) => `${s} ${a.bySeverity[s]}`);
    lines.push({ text: `alerts firing ${total}${parts.length ? `: ${parts.join('  ')}` : ''}`, color: total > 0 ? 'red' : 'green' });
  } else lines.push(...errorLine('alerts', now));
  const g = now.gateway;
  if (g) {
    const l = latency(now, prev);
    const notClosed = g.breakers.filter((b) => b.state !== 'CLOSED');
    lines.push({
      text: `gateway ${l.rate === undefined ? '-' : l.rate.toFixed(1)} req/s  p50 ${ms(l.p50)}  p95 ${ms(l.p95)}  requests ${g.requests}  5xx ${g.errors}  cost today $${g.costToday.toFixed(4)}`,
    });
    lines.push({ text: `breakers ${notClosed.length === 0 ? 'all closed' : notClosed.map((b) => `${b.provider} ${b.state}`).join('  ')}`, color: notClosed.some((b) => b.state === 'OPEN') ? 'red' : notClosed.length ? 'yellow' : 'green' });
  } else lines.push(...errorLine('gateway', now));
  const n = now.nodes;
  if (n) {
    lines.push({
      text: `nodes online ${n.online ?? 0}  offline ${n.offline ?? 0}  out ${n.out ?? 0}  error ${n.error ?? 0}  waiting ${n.waiting ?? 0}`,
      color: (n.offline ?? 0) + (n.out ?? 0) > 0 ? 'yellow' : undefined,
    });
  } else lines.push(...errorLine('nodes', now));
  const p = now.pipeline;
  if (p) {
    lines.push({ text: `pipeline ${p.pending} posts pending review  ${p.approved} approved  failed runs ${p.failedRuns}  unhealthy sources ${p.unhealthySources}`, color: p.unhealthySources > 0 ? 'yellow' : undefined });
  } else lines.push(...errorLine('pipeline', now));
  return lines;
}

function alertsPane(now: Snapshot): Line[] {
  const a = now.alerts;
  if (!a) return errorLine('alerts', now);
  if (a.top.length === 0) return [{ text: 'no alert firing', color: 'green' }];
  return [
    { text: 'ALERT                        SEVERITY   COMPONENT    SUMMARY', bold: true },
    ...a.top.map((x) => ({
      text: `${x.name.padEnd(28).slice(0, 28)} ${x.severity.padEnd(10).slice(0, 10)} ${x.component.padEnd(12).slice(0, 12)} ${x.summary}`,
      color: (x.severity === 'critical' || x.severity === 'page' ? 'red' : 'yellow') as Line['color'],
    })),
  ];
}

function gatewayPane(now: Snapshot, prev: Snapshot | undefined): Line[] {
  const g = now.gateway;
  if (!g) return errorLine('gateway', now);
  const l = latency(now, prev);
  return [
    { text: `requests ${g.requests}  5xx ${g.errors}  ${l.rate === undefined ? '-' : l.rate.toFixed(1)} req/s  p50 ${ms(l.p50)}  p95 ${ms(l.p95)}  cost today $${g.costToday.toFixed(4)}`, bold: true },
    { text: 'PROVIDER                     BREAKER', bold: true },
    ...g.breakers.map((b) => ({ text: `${b.provider.padEnd(28).slice(0, 28)} ${b.state}`, color: (b.state === 'OPEN' ? 'red' : b.state === 'CLOSED' ? 'green' : 'yellow') as Line['color'] })),
  ];
}

function listenersPane(now: Snapshot): Line[] {
  const d = now.daemon;
  if (!d) return errorLine('daemon', now);
  return [
    { text: 'SERVER        ADDRESS                  STATE         COMPONENT  ERROR', bold: true },
    ...d.listeners.map((l) => ({
      text: `${l.name.padEnd(13)} ${l.address.padEnd(24)} ${l.state.padEnd(13)} ${l.component.padEnd(10)} ${l.error}`,
      color: (l.component !== 'running' || l.state === 'failed' ? 'red' : l.state === 'stopped' ? 'yellow' : 'green') as Line['color'],
    })),
  ];
}

export function frame(now: Snapshot, prev: Snapshot | undefined, pane: Pane): Line[] {
  switch (pane) {
    case 'alerts':
      return alertsPane(now);
    case 'gateway':
      return gatewayPane(now, prev);
    case 'listeners':
      return listenersPane(now);
    default:
      return overview(now, prev);
  }
}
