/**
 * The gateway's `GET /metrics`: every finished request counted by provider, model and status, with
 * tokens, cost, cache outcome and latency (from the same entry the request log gets), plus the
 * circuit breaker of each provider and the budget use of each API key, read at scrape time.
 */
import { ComponentMetrics, LabeledCounts, type Labeled } from '../../http/metrics.js';
import { breakerView } from '../resilience/views.js';
import type { GatewayServices } from '../services.js';
import type { RequestLogEntry } from '../request-log/store.js';

const BREAKER_STATES = ['CLOSED', 'DEGRADED', 'HALF_OPEN', 'OPEN'];
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

type Cell = { value: number };

/** One provider and model's cells in the counters (each taken when it is first added to). */
interface ModelSeries {
  latencyLabels: Record<string, string>;
  status: Map<number, Cell>;
  tokensIn?: Cell;
  tokensOut?: Cell;
  tokensCached?: Cell;
  tokensReasoning?: Cell;
  cost?: Cell;
}

export class GatewayMetrics {
  private readonly requests = new LabeledCounts();
  private readonly tokens = new LabeledCounts();
  private readonly cost = new LabeledCounts();
  private readonly cache = new LabeledCounts();
  private readonly memorySkips = new LabeledCounts();
  /** The counters' cells of each provider and model, taken as each is first counted. */
  private readonly byProvider = new Map<string, Map<string, ModelSeries>>();
  private readonly latency: (labels: Record<string, string>, seconds: number) => void;
  readonly endpoint: ComponentMetrics;

  constructor(svc: () => GatewayServices) {
    this.endpoint = new ComponentMetrics((m) => {
      m.counter('ctl_gateway_requests_total', 'Requests answered, by provider, model and HTTP status.', ['provider', 'model', 'status'], () => this.requests.values());
      m.counter('ctl_gateway_tokens_total', 'Tokens by provider, model and direction (in, out, cached, reasoning).', ['provider', 'model', 'type'], () => this.tokens.values());
      m.counter('ctl_gateway_cost_usd_total', 'Cost in USD by provider and model.', ['provider', 'model'], () => this.cost.values());
      m.counter('ctl_gateway_cache_total', 'Response cache outcomes (hit, miss, replay).', ['result'], () => this.cache.values());
      m.gauge('ctl_gateway_circuit_breaker_state', 'Circuit breaker of each provider: 1 for its current state.', ['provider', 'state'], () => {
        const s = svc();
        const now = s.clock.now();
        const out: Labeled = [];
        for (const p of s.state.catalog.ordered) {
          const state = String(breakerView(s, p.config.id, now).state);
          for (const st of BREAKER_STATES) out.push([{ provider: p.config.id, state: st }, st === state ? 1 : 0]);
        }
        return out;
      });
      m.gauge('ctl_gateway_budget_used_ratio', 'Share of each API key budget spent in the current period.', ['api_key_id', 'period'], () => {
        const s = svc();
        const now = s.clock.now();
        const out: Labeled = [];
        for (const b of s.budgets.list()) {
          const periods = s.budgets.view(b, now).periods as Record<string, { limitUsd: number; spentUsd: number }>;
          for (const [period, p] of Object.entries(periods)) out.push([{ api_key_id: b.apiKeyId, period }, p.limitUsd > 0 ? p.spentUsd / p.limitUsd : 0]);
        }
        return out;
      });
      m.counter('ctl_gateway_memory_injection_skipped_total', 'Chat requests sent without their memories: the lookup was late (past its deadline) or failed.', ['reason'], () => this.memorySkips.values());
      // The shared request log's queue (storage.postgres): rows waiting for the database, rows dropped from a full queue.
      const sharedLog = () => (svc().state.db as unknown as { requestLog?: { queued: number; dropped: number } }).requestLog;
      m.counter('ctl_gateway_request_log_dropped_total', 'Request-log rows dropped because the queue for the shared database was full.', [], () => [[{}, sharedLog()?.dropped ?? 0]]);
      m.gauge('ctl_gateway_request_log_queued', 'Request-log rows waiting to be written to the shared database.', [], () => [[{}, sharedLog()?.queued ?? 0]]);
    });
    this.latency = this.endpoint.histogram('ctl_gateway_request_duration_seconds', 'Time to answer a request, by provider.', ['provider'], LATENCY_BUCKETS);
  }

  /** A chat request went on without its memories (`late`: past the deadline; `error`: the lookup failed). */
  memorySkipped(reason: 'late' | 'error'): void {
    this.memorySkips.add({ reason });
  }

  /** A finished request (the request-log entry). */
  record(e: RequestLogEntry): void {
    const provider = e.provider ?? '';
    const model = e.model ?? e.requestedModel ?? '';
    // The series of this provider and model, kept: no label objects, keys or lookups per request.
    let byModel = this.byProvider.get(provider);
    if (!byModel) this.byProvider.set(provider, (byModel = new Map()));
    let s = byModel.get(model);
    if (!s) byModel.set(model, (s = { latencyLabels: { provider }, status: new Map() }));
    let requests = s.status.get(e.status);
    if (!requests) s.status.set(e.status, (requests = this.requests.cell({ provider, model, status: String(e.status) })));
    requests.value++;
    if (e.tokensIn) (s.tokensIn ??= this.tokens.cell({ provider, model, type: 'in' })).value += e.tokensIn;
    if (e.tokensOut) (s.tokensOut ??= this.tokens.cell({ provider, model, type: 'out' })).value += e.tokensOut;
    if (e.tokensCached) (s.tokensCached ??= this.tokens.cell({ provider, model, type: 'cached' })).value += e.tokensCached;
    if (e.tokensReasoning) (s.tokensReasoning ??= this.tokens.cell({ provider, model, type: 'reasoning' })).value += e.tokensReasoning;
    if (e.cost > 0) (s.cost ??= this.cost.cell({ provider, model })).value += e.cost;
    if (e.cache) this.cache.add({ result: e.cache });
    this.latency(s.latencyLabels, e.latencyMs / 1000);
  }
}
