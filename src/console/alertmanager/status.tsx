/** #/status: uptime, cluster status and peers, version information, the running configuration. */
import { Banner } from '../kit/components.js';
import { localTime, relative } from '../kit/format.js';
import { useFetch } from '../kit/data.js';
import type { Status } from './types.js';

export function StatusPage() {
  const status = useFetch<Status>('api/v2/status');
  const s = status.data;
  return (
    <section aria-labelledby="status-h">
      <h1 id="status-h">Status</h1>
      <Banner error={status.error} />
      {!s && !status.error && <p class="muted">Loading…</p>}
      {s && (
        <>
          <table class="grid details">
            <tbody>
              <tr>
                <th>Uptime</th>
                <td data-testid="uptime">
                  {localTime(s.uptime)} <span class="muted">(up {relative(s.uptime).replace(/ ago$/, '')})</span>
                </td>
              </tr>
              <tr>
                <th>Cluster status</th>
                <td data-testid="cluster-status">{s.cluster.status}</td>
              </tr>
              {s.cluster.name && (
                <tr>
                  <th>Cluster name</th>
                  <td class="mono">{s.cluster.name}</td>
                </tr>
              )}
            </tbody>
          </table>
          <h2>Cluster members</h2>
          {s.cluster.peers && s.cluster.peers.length > 0 ? (
            <table class="grid">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Address</th>
                </tr>
              </thead>
              <tbody>
                {s.cluster.peers.map((p) => (
                  <tr key={p.name} data-testid="cluster-peer">
                    <td class="mono">{p.name}</td>
                    <td class="mono">{p.address}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            <p class="muted">No cluster peers (this alert manager runs alone).</p>
          )}
          <h2>Version</h2>
          <table class="grid details">
            <tbody>
              {Object.keys(s.versionInfo).map((k) => (
                <tr key={k}>
                  <th>{k}</th>
                  <td class="mono">{s.versionInfo[k]}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <h2>Configuration</h2>
          <pre data-testid="config">{s.config.original}</pre>
        </>
      )}
    </section>
  );
}
