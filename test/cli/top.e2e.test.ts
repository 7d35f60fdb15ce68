/**
 * `ctl top` against a running daemon: `--once` prints the overview and each pane as text; the live
 * dashboard runs in a tmux pane, switches panes on keys and quits on q.
 */
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { CTL, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { parseMetrics, histogramQuantile } from '../../cli/top/metrics-text.js';

let d: TestDaemon;

beforeAll(async () => {
  d = await startDaemon({});
  const r = await d.request('alertmanager', 'POST', '/api/v2/alerts', [
    { labels: { alertname: 'DiskFull', severity: 'critical' }, annotations: { summary: 'disk 99% full' } },
    { labels: { alertname: 'Slow', severity: 'warning' } },
    { labels: { alertname: 'Slower', severity: 'warning' } },
  ]);
  expect(r.status).toBe(200);
}, 60_000);

afterAll(async () => {
  await d?.cleanup();
});

describe('ctl top', () => {
  it('--once prints the overview: listeners, alerts by severity, gateway, nodes, pipeline', async () => {
    const r = await d.cli(['top', '--once']);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ctl \S+ \S+ {2}up \d+m\d+s {2}servers 4\/4 up$/);
    expect(lines[1]).toBe('alerts firing 3: critical 1  warning 2');
    expect(lines[2]).toMatch(/^gateway - req\/s {2}p50 - {2}p95 - {2}requests 0 {2}5xx 0 {2}cost today \$0\.0000$/);
    expect(lines[3]).toBe('breakers all closed');
    expect(lines[4]).toBe('nodes online 0  offline 0  out 0  error 0  waiting 0');
    expect(lines[5]).toBe('pipeline 0 posts pending review  0 approved  failed runs 0  unhealthy sources 0');
  });

  it('-o json --once prints the snapshot as JSON (before or after the command); -o json without --once is a usage error', async () => {
    for (const args of [['-o', 'json', 'top', '--once'], ['top', '--once', '-o', 'json']]) {
      const r = await d.cli(args);
      expect(r.code, r.stderr).toBe(0);
      const j = JSON.parse(r.stdout);
      expect(j.at).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect(j.daemon.listeners).toHaveLength(4);
      expect(j.alerts.bySeverity).toEqual({ critical: 1, warning: 2 });
      expect(j.gateway).toMatchObject({ requests: 0, errors: 0, buckets: {} });
      expect(j.errors).toEqual({});
    }
    expect(YAML.parse((await d.cli(['-o', 'yaml', 'top', '--once'])).stdout).daemon.listeners).toHaveLength(4);
    const live = await d.cli(['-o', 'json', 'top']);
    expect(live.code).toBe(2);
    expect(live.stderr).toMatch(/add --once/);
  });

  it('--once --pane alerts lists the firing alerts; a bad pane is a usage error', async () => {
    const r = await d.cli(['top', '--once', '--pane', 'alerts']);
    expect(r.stdout).toMatch(/^DiskFull +critical +disk 99% full$/m);
    const bad = await d.cli(['top', '--once', '--pane', 'nope']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--pane must be one of overview, alerts, gateway, listeners/);
  });

  it.skipIf(spawnSync('sh', ['-c', 'command -v tmux']).status !== 0)('live in tmux (with CI=true exported, as in a build runner): refreshes, switches panes with keys, quits with q', async () => {
    const session = `ctl-top-${process.pid}`;
    const tmux = (...args: string[]) => spawnSync('tmux', args, { encoding: 'utf8' });
    const capture = () => tmux('capture-pane', '-p', '-t', session).stdout;
    const until = async (ok: (screen: string) => boolean) => {
      const end = Date.now() + 15_000;
      let screen = '';
      while (Date.now() < end) {
        screen = capture();
        if (ok(screen)) return screen;
        await new Promise((r) => setTimeout(r, 100));
      }
      return screen;
    };
    expect(tmux('new-session', '-d', '-s', session, '-x', '120', '-y', '30', `env CI=true ${process.execPath} ${CTL} --state-dir ${d.dir} top --interval 0.5`).status).toBe(0);
    try {
      expect(await until((s) => s.includes('alerts firing 3'))).toMatch(/\[1 overview\]/);
      tmux('send-keys', '-t', session, '2');
      expect(await until((s) => s.includes('[2 alerts]'))).toMatch(/DiskFull +critical/);
      tmux('send-keys', '-t', session, '4');
      expect(await until((s) => s.includes('[4 listeners]'))).toMatch(/gateway +127\.0\.0\.1:\d+ +listening +running/);
      tmux('send-keys', '-t', session, 'q');
      const end = Date.now() + 10_000;
      while (Date.now() < end && tmux('has-session', '-t', session).status === 0) await new Promise((r) => setTimeout(r, 100));
      expect(tmux('has-session', '-t', session).status).not.toBe(0);
    } finally {
      tmux('kill-session', '-t', session);
    }
  }, 40_000);
});

describe('ctl top helpers', () => {
  it('reads the Prometheus text format and interpolates quantiles like histogram_quantile', () => {
    const s = parseMetrics('# HELP x y\nh_bucket{le="0.1",p="a"} 10\nh_bucket{le="0.5",p="a"} 30\nh_bucket{le="+Inf",p="a"} 40\nc{a="x\\"y"} 3\n');
    expect(s.find((x) => x.name === 'c')!.labels.a).toBe('x"y');
    const b = new Map([
      [0.1, 10],
      [0.5, 30],
      [Infinity, 40],
    ]);
    expect(histogramQuantile(0.5, b)).toBeCloseTo(0.3);
    expect(histogramQuantile(0.25, b)).toBeCloseTo(0.1);
    expect(histogramQuantile(0.95, b)).toBe(0.5);
    expect(histogramQuantile(0.5, new Map())).toBeUndefined();
  });
});
