/** `ctl gateway tunnel status|enable|disable` (/api/tunnels/tunnel-a and tunnel-b). */
import type { Command } from 'commander';
import { request } from './client.js';
import { outputFormat, printData, printObject } from './output.js';
import { action } from './run.js';

interface TunnelStatus {
  id: string;
  name: string;
  installed: boolean;
  version: string | null;
  enabled: boolean;
  running: boolean;
  publicUrl: string | null;
  live: boolean;
  probe: { state: string; error: string | null } | null;
  target: string | null;
  restarts: number;
  reason: string | null;
}

const ID = (name: string) => (name === 'cloudflared' || name === 'a' ? 'tunnel-a' : name === 'tailscale' || name === 'b' ? 'tunnel-b' : name);

export function registerTunnels(g: Command, auth: () => Record<string, string>): void {
  const api = <T>(method: string, path: string, body?: unknown) => request<T>({ host: 'gateway', method, path, body, headers: auth() });
  const show = (v: TunnelStatus) =>
    printObject(
      [
        ['tunnel', `${v.id} (${v.name})`],
        ['installed', v.installed ? `yes${v.version ? ` (${v.version})` : ''}` : `no: ${v.reason}`],
        ['enabled', v.enabled],
        ['running', v.running],
        ['public URL', v.publicUrl ?? ''],
        ['live', v.live ? 'yes (a probe through the public URL reached ctl)' : v.probe?.state === 'probing' ? 'not yet (probing)' : v.probe?.error ? `no: ${v.probe.error}` : 'no'],
        ['target', v.target ?? ''],
        ['restarts', v.restarts],
      ],
      v,
    );
  const t = g.command('tunnel').description('publish the gateway through a tunnel (tunnel-a: cloudflared quick tunnel, tunnel-b: tailscale funnel): status, enable, disable');
  t.command('status <tunnel>')
    .description('installed, running, public URL (TUNNEL: tunnel-a or cloudflared, tunnel-b or tailscale)')
    .action(action(async (id: string) => show(await api<TunnelStatus>('GET', `/api/tunnels/${ID(id)}`))));
  t.command('enable <tunnel>')
    .description('start the tunnel as a supervised child of the daemon; prints its public URL once a probe through it reached ctl')
    .option('--target <url>', 'the gateway address it forwards to (needed over the control socket unless ctl.yaml gateway.tunnels.target is set)')
    .action(
      action(async (id: string, o: { target?: string }) => {
        const v = await api<TunnelStatus>('POST', `/api/tunnels/${ID(id)}`, { action: 'enable', ...(o.target ? { target: o.target } : {}) });
        if (outputFormat() !== 'table') return printData(v);
        process.stdout.write(v.publicUrl ? `${v.publicUrl}\n` : `started; no public URL yet (ctl gateway tunnel status ${v.id})\n`);
      }),
    );
  t.command('disable <tunnel>')
    .description('stop the tunnel')
    .action(action(async (id: string) => show(await api<TunnelStatus>('POST', `/api/tunnels/${ID(id)}`, { action: 'disable' }))));
}
