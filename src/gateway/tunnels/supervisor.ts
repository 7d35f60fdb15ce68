/**
 * Tunnels that publish the gateway through a third party: tunnel-a is a Cloudflare quick tunnel
 * (`cloudflared tunnel --url TARGET`), tunnel-b a Tailscale Funnel (`tailscale funnel PORT`). Each runs
 * as a supervised child (no shell): started on enable, its public URL read from its output, restarted
 * with a growing delay (1 s doubling to 60 s) when it exits on its own, stopped (SIGTERM, then SIGKILL
 * after 5 s) on disable and when the gateway stops. Whether a tunnel is enabled, and its target, are
 * kept in the gateway database, so an enabled tunnel comes back with the daemon.
 *
 * A printed address is not yet a working one: once the program prints it, ctl requests a random
 * nonce path through it (`/.well-known/ctl-tunnel-probe/NONCE`, through the egress policy) and
 * reports the tunnel live only when that request arrives back at ctl's probe route.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Egress } from '../../egress/index.js';
import type { Logger } from 'pino';
import type { GatewayStore } from '../store.js';
import { detect, which } from '../local-tools/detect.js';
import { GatewayError } from '../errors.js';

export interface TunnelKind {
  id: 'tunnel-a' | 'tunnel-b';
  kind: 'cloudflared' | 'tailscale-funnel';
  name: string;
  binary: string;
  versionArgs: string[];
  args(target: URL): string[];
  /** The public address in a line of its output, if there is one. */
  publicUrl(line: string): string | undefined;
}

export const TUNNELS: TunnelKind[] = [
  {
    id: 'tunnel-a',
    kind: 'cloudflared',
    name: 'Cloudflare quick tunnel',
    binary: 'cloudflared',
    versionArgs: ['--version'],
    args: (t) => ['tunnel', '--no-autoupdate', '--url', t.origin],
    publicUrl: (line) => /https:\/\/[a-z0-9-]+\.trycloudflare\.com/.exec(line)?.[0],
  },
  {
    id: 'tunnel-b',
    kind: 'tailscale-funnel',
    name: 'Tailscale Funnel',
    binary: 'tailscale',
    versionArgs: ['version'],
    args: (t) => ['funnel', t.port || (t.protocol === 'https:' ? '443' : '80')],
    publicUrl: (line) => /https:\/\/[a-z0-9.-]+\.ts\.net\/?/.exec(line)?.[0],
  },
];

interface Running {
  child: ChildProcess;
  pid: number;
  startedAt: number;
  publicUrl: string | null;
  output: string[];
}

/** The last probe through a tunnel's public address. */
interface Probe {
  state: 'probing' | 'reached' | 'failed';
  url: string;
  at: number;
  error: string | null;
}

/** The path a probe requests through the tunnel; the gateway answers it at PROBE_ROUTE. */
export const PROBE_PATH = '/.well-known/ctl-tunnel-probe/';
export const PROBE_ROUTE = `${PROBE_PATH}:nonce`;
/** Default for ctl.yaml `gateway.tunnels.probe_timeout_ms`: how long a probe keeps trying. */
export const PROBE_TIMEOUT_MS = 30_000;

interface TunnelState {
  enabled: boolean;
  target: string | null;
  running?: Running;
  restarts: number;
  restartTimer?: NodeJS.Timeout;
  lastExit?: { code: number | null; signal: string | null; at: number; output: string };
  probe?: Probe;
  /** The run the probe belongs to. */
  probed?: Running;
}

const KEEP_LINES = 20;

export class Tunnels {
  private readonly state = new Map<string, TunnelState>();
  /** Nonces of the probes under way, each with what to do when its request arrives. */
  private readonly pending = new Map<string, () => void>();

  constructor(
    private readonly db: GatewayStore,
    private readonly env: () => NodeJS.ProcessEnv,
    private readonly now: () => number,
    private readonly log: Logger,
    private readonly egress: Egress,
    private readonly probeTimeoutMs = PROBE_TIMEOUT_MS,
  ) {
    for (const t of TUNNELS) {
      const saved = this.saved(t.id);
      this.state.set(t.id, { enabled: saved.enabled, target: saved.target, restarts: 0 });
    }
  }

  private saved(id: string): { enabled: boolean; target: string | null } {
    try {
      return JSON.parse(this.db.getSetting(`tunnels.${id}`) ?? '{"enabled":false,"target":null}') as { enabled: boolean; target: string | null };
    } catch {
      return { enabled: false, target: null };
    }
  }

  private save(id: string, s: TunnelState): void {
    this.db.setSetting(`tunnels.${id}`, JSON.stringify({ enabled: s.enabled, target: s.target }));
  }

  kindOf(id: string): TunnelKind {
    const t = TUNNELS.find((x) => x.id === id);
    if (!t) throw new GatewayError('not-found', `no tunnel ${id} (tunnel-a: cloudflared, tunnel-b: tailscale funnel)`, { code: 'not_found' });
    return t;
  }

  async status(id: string): Promise<Record<string, unknown>> {
    const t = this.kindOf(id);
    const s = this.state.get(id)!;
    const d = await detect(t.binary, t.versionArgs, this.env());
    return {
      id: t.id,
      kind: t.kind,
      name: t.name,
      installed: d.installed,
      version: d.version,
      binaryPath: d.commandPath,
      enabled: s.enabled,
      running: s.running !== undefined,
      pid: s.running?.pid ?? null,
      publicUrl: s.running?.publicUrl ?? null,
      live: s.running !== undefined && s.probed === s.running && s.probe?.state === 'reached',
      probe: s.probe ? { state: s.probe.state, url: s.probe.url, at: new Date(s.probe.at).toISOString(), error: s.probe.error } : null,
      target: s.target,
      startedAt: s.running ? new Date(s.running.startedAt).toISOString() : null,
      restarts: s.restarts,
      lastExit: s.lastExit ? { code: s.lastExit.code, signal: s.lastExit.signal, at: new Date(s.lastExit.at).toISOString(), output: s.lastExit.output } : null,
      reason: d.installed ? null : `${t.binary} is not installed (not found on the daemon's PATH)`,
    };
  }

  /**
   * Start the tunnel (409 when its program is missing); waits up to `waitMs` for the public URL, then
   * for the probe through it.
   */
  async enable(id: string, target: string, waitMs = 15_000): Promise<void> {
    const t = this.kindOf(id);
    if (!which(t.binary, this.env().PATH)) throw new GatewayError('conflict', `${t.name} cannot start: ${t.binary} is not installed (not found on the daemon's PATH)`, { code: 'tunnel_not_installed' });
    const s = this.state.get(id)!;
    if (s.running && s.target === target && s.probe?.state !== 'failed') return;
    await this.stopChild(s);
    s.enabled = true;
    s.target = target;
    s.restarts = 0;
    s.probe = undefined;
    this.save(id, s);
    this.start(t, s);
    const run = s.running!;
    const started = performance.now();
    const probe = (): Probe | undefined => (s.probed === run ? s.probe : undefined);
    const settled = () => probe() !== undefined && probe()!.state !== 'probing';
    while (s.enabled && s.running === run && !settled() && (run.publicUrl || performance.now() - started < waitMs)) await new Promise((r) => setTimeout(r, 50));
    if (s.running === run && (!run.publicUrl || probe()?.state === 'reached')) return;
    if (!s.enabled) return;
    // The program ended before it published an address, or what it published does not reach ctl: the
    // enable failed. It is not kept enabled (a restart loop of a program that cannot start helps no
    // one); the answer says how it ended.
    const stillRunning = s.running === run;
    await this.stopChild(s);
    s.enabled = false;
    s.restarts = 0;
    this.save(id, s);
    if (stillRunning) {
      throw new GatewayError('remote', `${t.name} published ${run.publicUrl} but ${probe()?.error ?? 'the probe through it did not finish'}; the tunnel was stopped`, { code: 'tunnel_unreachable' });
    }
    const exit = s.lastExit;
    const how = exit?.signal ? `was killed by ${exit.signal}` : `exited with status ${exit?.code ?? 'unknown'}`;
    const when = run.publicUrl ? `after it published ${run.publicUrl}, before a request through it reached ctl` : 'before it published an address';
    throw new GatewayError('remote', `${t.name} ${how} ${when}${exit?.output ? `: ${exit.output.split('\n').slice(-5).join(' | ')}` : ''}`, {
      code: 'tunnel_exited',
    });
  }

  /** The probe route: true (and the probe succeeds) when `nonce` is one a probe is waiting for. */
  arrived(nonce: string): boolean {
    const done = this.pending.get(nonce);
    if (!done) return false;
    done();
    return true;
  }

  /**
   * Request a fresh nonce path through the public address until it arrives at ctl (`arrived`) or
   * `probeTimeoutMs` pass; a request is retried a second after it fails or is answered without
   * arriving (a new quick tunnel's name can take a moment to resolve).
   */
  private async probe(t: TunnelKind, s: TunnelState, run: Running, publicUrl: string): Promise<void> {
    const nonce = randomBytes(16).toString('hex');
    const url = new URL(PROBE_PATH + nonce, publicUrl);
    const probe: Probe = { state: 'probing', url: url.origin, at: this.now(), error: null };
    s.probe = probe;
    s.probed = run;
    let reached = false;
    let wake = () => {};
    this.pending.set(nonce, () => {
      reached = true;
      wake();
    });
    const deadline = performance.now() + this.probeTimeoutMs;
    let why = 'no answer';
    try {
      while (!reached && s.running === run) {
        const left = deadline - performance.now();
        if (left <= 0) break;
        const abort = new AbortController();
        const timer = setTimeout(() => abort.abort(), Math.min(left, 10_000));
        try {
          const res = await this.egress.request(url, { method: 'GET', signal: abort.signal, headers: { 'user-agent': 'ctl-tunnel-probe' } });
          await res.body.dump().catch(() => undefined);
          if (!reached) why = `a request through it was answered ${res.statusCode} by something other than ctl`;
        } catch (e) {
          // A request cut off by the deadline says less than an earlier attempt's answer: keep that.
          if (!reached && !(abort.signal.aborted && why !== 'no answer')) {
            why = abort.signal.aborted ? 'a request through it had no answer' : `a request through it failed: ${(e as Error).message}`;
          }
        } finally {
          clearTimeout(timer);
        }
        if (!reached) {
          await new Promise<void>((r) => {
            wake = r;
            setTimeout(r, Math.max(0, Math.min(1000, deadline - performance.now())));
          });
        }
      }
    } finally {
      this.pending.delete(nonce);
    }
    if (s.probe !== probe) return;
    probe.at = this.now();
    if (reached) probe.state = 'reached';
    else if (s.running === run) {
      probe.state = 'failed';
      probe.error = `no request through it reached ctl within ${Math.round(this.probeTimeoutMs / 1000)} s (${why})`;
      this.log.warn({ tunnel: t.id, publicUrl, error: probe.error }, `${t.name} is not reachable through its public address`);
    } else {
      probe.state = 'failed';
      probe.error = 'the program exited while the probe was under way';
    }
  }

  async disable(id: string): Promise<void> {
    this.kindOf(id);
    const s = this.state.get(id)!;
    s.enabled = false;
    this.save(id, s);
    await this.stopChild(s);
  }

  /** Bring back the tunnels that were enabled when the daemon stopped. */
  resume(): void {
    for (const t of TUNNELS) {
      const s = this.state.get(t.id)!;
      if (s.enabled && s.target && !s.running) {
        if (which(t.binary, this.env().PATH)) this.start(t, s);
        else this.log.warn({ tunnel: t.id }, `${t.name} is enabled but ${t.binary} is not installed`);
      }
    }
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.state.values()].map((s) => this.stopChild(s)));
  }

  private start(t: TunnelKind, s: TunnelState): void {
    const child = spawn(which(t.binary, this.env().PATH) ?? t.binary, t.args(new URL(s.target!)), { env: this.env(), stdio: ['ignore', 'pipe', 'pipe'], shell: false });
    const run: Running = { child, pid: child.pid ?? -1, startedAt: this.now(), publicUrl: null, output: [] };
    s.running = run;
    const onData = (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (!line.trim()) continue;
        run.output.push(line.slice(0, 500));
        if (run.output.length > KEEP_LINES) run.output.shift();
        if (run.publicUrl) continue;
        run.publicUrl = t.publicUrl(line) ?? null;
        if (run.publicUrl) void this.probe(t, s, run, run.publicUrl);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('error', (e) => run.output.push(`spawn failed: ${e.message}`));
    child.on('exit', (code, signal) => {
      if (s.running !== run) return;
      s.running = undefined;
      s.lastExit = { code, signal, at: this.now(), output: run.output.join('\n') };
      if (!s.enabled) return;
      // Exited on its own while enabled: start again after a delay that grows with each restart.
      const delay = Math.min(60_000, 1000 * 2 ** Math.min(s.restarts, 6));
      s.restarts++;
      this.log.warn({ tunnel: t.id, code, signal, restartInMs: delay }, `${t.name} exited; restarting`);
      s.restartTimer = setTimeout(() => {
        s.restartTimer = undefined;
        if (s.enabled && !s.running) this.start(t, s);
      }, delay);
      s.restartTimer.unref();
    });
  }

  private async stopChild(s: TunnelState): Promise<void> {
    clearTimeout(s.restartTimer);
    s.restartTimer = undefined;
    const run = s.running;
    if (!run) return;
    s.running = undefined;
    if (run.child.exitCode !== null || run.child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const kill = setTimeout(() => run.child.kill('SIGKILL'), 5000);
      run.child.once('exit', (code, signal) => {
        clearTimeout(kill);
        s.lastExit = { code, signal, at: this.now(), output: run.output.join('\n') };
        resolve();
      });
      run.child.kill('SIGTERM');
    });
  }
}

/**
 * ctl.yaml `gateway.tunnels`: `target`, the gateway address tunnels forward to (default: the address
 * an enable request came to); `probe_timeout_ms`, how long the probe through a new public address
 * keeps trying (default 30000).
 */
export function tunnelTarget(config: Record<string, unknown>): { tunnelTarget?: string; tunnelProbeTimeoutMs?: number } {
  const t = config.tunnels;
  if (t === undefined || t === null) return {};
  if (typeof t !== 'object' || Array.isArray(t)) throw new Error('ctl.yaml gateway.tunnels must be a mapping');
  for (const k of Object.keys(t)) if (k !== 'target' && k !== 'probe_timeout_ms') throw new Error(`ctl.yaml gateway.tunnels: unknown field ${k}`);
  const { target, probe_timeout_ms: probe } = t as { target?: unknown; probe_timeout_ms?: unknown };
  const out: { tunnelTarget?: string; tunnelProbeTimeoutMs?: number } = {};
  if (probe !== undefined) {
    if (typeof probe !== 'number' || !Number.isInteger(probe) || probe < 100 || probe > 600_000) throw new Error('ctl.yaml gateway.tunnels.probe_timeout_ms must be an integer from 100 to 600000');
    out.tunnelProbeTimeoutMs = probe;
  }
  if (target === undefined) return out;
  if (typeof target !== 'string' || !/^https?:\/\/[^/]+\/?$/.test(target)) throw new Error('ctl.yaml gateway.tunnels.target must be http(s)://host:port');
  return { ...out, tunnelTarget: target.replace(/\/+$/, '') };
}
