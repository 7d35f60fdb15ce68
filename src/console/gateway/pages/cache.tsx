// Cache and compression: what the response cache holds and saved, prompt-cache health, and the
// tokens compression took off.
import { api, Badge, Card, fmtInt, fmtMs, fmtUsd, Loading, Stat, useAction, useApi } from '../ui';

export function CachePage() {
  const cache = useApi<any>('/api/cache', 15_000);
  const saved = useApi<any>('/api/usage/history?days=30&period=day', 60_000);
  const health = useApi<any>('/api/usage/cache-health?range=24h', 60_000);
  const comp = useApi<any>('/api/analytics/compression', 60_000);
  const [run, note] = useAction();
  const s = cache.data?.stats?.semanticCache;
  const t = saved.data?.totals;
  return (
    <>
      {note}
      <Card
        title="Response cache"
        actions={
          <button class="danger" onClick={() => confirm('Clear every cached response?') && void run('Cache cleared.', () => api('/api/cache/stats', { method: 'DELETE' }).then(cache.reload))}>
            Clear cache
          </button>
        }
      >
        <Loading r={cache} />
        {s && (
          <div class="stats">
            <Stat label="State" value={<Badge tone={s.enabled ? 'ok' : 'muted'}>{s.enabled ? s.mode : 'off'}</Badge>} hint={`entries live ${fmtMs(s.ttlMs)}`} />
            <Stat label="Hit rate" value={`${Math.round((s.hitRate ?? 0) * 1000) / 10}%`} hint={`${fmtInt(s.hits)} hits, ${fmtInt(s.misses)} misses`} />
            <Stat label="Entries in memory" value={`${fmtInt(s.memorySize)}/${fmtInt(s.memoryMaxSize)}`} />
            <Stat label="Entries on disk" value={fmtInt(s.dbSize)} />
          </div>
        )}
      </Card>
      <Card title="Savings (30 days)">
        <Loading r={saved} />
        {t && (
          <div class="stats">
            <Stat label="Answered from the cache" value={fmtInt(t.cacheHits)} hint={`of ${fmtInt(t.requests)} requests`} />
            <Stat label="Cost avoided" value={fmtUsd(t.costSaved)} hint={`${fmtUsd(t.cost)} spent`} />
          </div>
        )}
      </Card>
      <Card title="Prompt cache (24 h)">
        <Loading r={health} />
        {health.data && (
          <div class="stats">
            <Stat label="Verdict" value={<Badge tone={health.data.verdict === 'healthy' ? 'ok' : health.data.verdict === 'no-data' ? 'muted' : 'warn'}>{health.data.verdict}</Badge>} />
            <Stat label="Cache reads (tokens)" value={fmtInt(health.data.cacheReadTokens)} />
            <Stat label="Cache writes (tokens)" value={fmtInt(health.data.cacheWriteTokens)} />
            <Stat label="Calls" value={fmtInt(health.data.totalCalls)} />
          </div>
        )}
      </Card>
      <Card title={`Compression (${comp.data?.window ?? '24h'})`}>
        <Loading r={comp} />
        {comp.data && (
          <div class="stats">
            <Stat label="Tokens saved" value={fmtInt(comp.data.totalSavings)} hint={`${fmtInt(comp.data.totalOriginalTokens)} before, ${fmtInt(comp.data.totalCompressedTokens)} after`} />
            <Stat label="Saved" value={`${Math.round((comp.data.savingsPct ?? 0) * 10) / 10}%`} />
          </div>
        )}
      </Card>
    </>
  );
}
