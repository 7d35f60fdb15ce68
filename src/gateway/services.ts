/** Everything the gateway's routes and its in-process handle share, created once per component. */
import type { FetchPool } from './webfetch/pool.js';
import type { SearchService } from './search/service.js';
import type { WebhookService } from './webhooks/service.js';
import type { MemoryData } from './memory/data.js';
import type { GeneralSettings } from './ops/settings.js';
import type { GatewayBackups } from './ops/backups.js';
import type { Policies } from './ops/policies.js';
import type { AuditLog } from './ops/audit.js';
import type { SystemControls } from './ops/system-routes.js';
import type { CompressionSettings } from './compression/settings.js';
import type { CompressionService } from './compression/service.js';
import type { McpService } from './agents/mcp/server.js';
import type { A2aService } from './agents/a2a/service.js';
import type { InProcessCall } from './in-process.js';
import type { SkillService } from './skills/service.js';
import type { ProxyRegistry } from './proxies/registry.js';
import type { ProxyProber } from './proxies/probe.js';
import type { RegisteredKeys } from './registered-keys/service.js';
import type { EvalService } from './evals/service.js';
import type { CliToolSettings } from './local-tools/cli-tools.js';
import type { AcpAgents } from './local-tools/acp.js';
import type { Tunnels } from './tunnels/supervisor.js';
import type { PluginService } from './plugins/service.js';
import type { Assessor } from './assess/service.js';
import type { AgentTasks } from './agents/tasks/service.js';
import type { SyncConfig } from './sync/remote.js';
import type { OAuthService } from './oauth/service.js';
import type { IssueTrackerConfig } from './registered-keys/tracker.js';
import type { FileService } from './files/service.js';
import type { BatchService } from './batches/service.js';
import type { Logger } from 'pino';
import type { Clock } from '../http/clock.js';
import type { Egress } from '../egress/index.js';
import type { GatewayAuth } from './auth.js';
import type { IdempotencyStore } from './cache/idempotency.js';
import type { ResponseCache } from './cache/response-cache.js';
import type { ReasoningCache } from './cache/reasoning.js';
import type { CacheSettings } from './cache/settings.js';
import type { Budgets } from './limits/budgets.js';
import type { KeyRpm } from './limits/rpm.js';
import type { GatewayMetrics } from './metrics/index.js';
import type { TokenLimits } from './limits/token-limits.js';
import type { ConcurrencyLimiter, ConcurrencySettings } from './resilience/concurrency.js';
import type { ResilienceState } from './resilience/persist.js';
import type { ResilientPolicy } from './resilience/policy.js';
import type { ResilienceSettings } from './resilience/settings.js';
import type { RoutingMetrics } from './routing/metrics.js';
import type { StrategyContext } from './routing/strategies.js';
import type { LayeredSettings } from './runtime-settings.js';
import type { GatewayState } from './state.js';
import type { UsageRecorder } from './request-log/recorder.js';
import type { AbortLike } from './abort.js';

export interface RuntimeSettings {
  resilience: LayeredSettings<ResilienceSettings>;
  cache: LayeredSettings<CacheSettings>;
  concurrency: LayeredSettings<ConcurrencySettings>;
  /** /api/settings: requireLogin, mcpEnabled, a2aEnabled, systemPrompt, thinkingBudget, ipFilter. */
  general: LayeredSettings<GeneralSettings>;
  /** /api/settings/compression (and its caveman and rtk parts). */
  compression: LayeredSettings<CompressionSettings>;
}

export interface GatewayServices {
  state: GatewayState;
  auth: GatewayAuth;
  usage: UsageRecorder;
  metrics: RoutingMetrics;
  /** GET /metrics: request counts, tokens, cost, latency, breakers, budgets. */
  prometheus: GatewayMetrics;
  /** Availability and outcome hook of the attempt loop: breakers, cool-downs, lock-outs, affinity. */
  policy: ResilientPolicy;
  /** Batched persistence of breaker and cool-down state. */
  resilienceState: ResilienceState;
  /** Settings the management API changes (defaults < gateway.yaml < API). */
  runtime: RuntimeSettings;
  cache: ResponseCache;
  /** Reasoning of tool-calling answers, handed back on the next turn (GET/DELETE /api/cache/reasoning). */
  reasoningCache: ReasoningCache;
  idempotency: IdempotencyStore;
  budgets: Budgets;
  tokenLimits: TokenLimits;
  /** Requests per minute of keys with `rpm`. */
  rpm: KeyRpm;
  concurrency: ConcurrencyLimiter;
  strategy: StrategyContext;
  clock: Clock;
  egress: Egress;
  /** The component's uploads directory (created when first asked for). */
  uploadsDir: () => string;
  /** Largest audio upload (ctl.yaml gateway.max_audio_bytes). */
  maxAudioBytes: number;
  /** Uploaded files (/v1/files) and batches (/v1/batches). */
  files: FileService;
  batches: BatchService;
  /** The web-fetch pool's cool-downs (/v1/web/fetch). */
  webFetch: FetchPool;
  /** Web search: coalescing, cache and analytics (/v1/search). */
  search: SearchService;
  /** Outbound webhooks: the emitter every event goes through, and the delivery queue. */
  webhooks: WebhookService;
  /** Persistent memory (/api/memory), added to chat requests. */
  memory: MemoryData;
  /** Skills: installed manifests, the sandbox pool, executions. */
  skills: SkillService;
  /** Outbound proxies and their assignments (global, provider, connection); their health probes. */
  proxies: ProxyRegistry;
  proxyProber: ProxyProber;
  /** AI coding CLIs' gateway settings (/api/cli-tools) and ACP agents (/api/acp/agents) on this machine. */
  cliTools: CliToolSettings;
  acpAgents: AcpAgents;
  /** Tunnels publishing the gateway (cloudflared, tailscale funnel) as supervised children. */
  tunnels: Tunnels;
  /** ctl.yaml gateway.tunnels.target: the address tunnels forward to. */
  tunnelTarget?: string;
  /** Installed plugins and their sandboxed request and response hooks (/api/plugins). */
  plugins: PluginService;
  /** Tasks handed to cloud agent providers (/api/v1/agents/tasks). */
  agentTasks: AgentTasks;
  /** ctl.yaml gateway.sync: where /api/sync pushes and pulls the configuration; undefined: not configured. */
  sync?: SyncConfig;
  /** OAuth logins as provider accounts (/api/oauth). */
  oauth: OAuthService;
  /** Probes and categorises models (/api/assess). */
  assessor: Assessor;
  /** Eval suites and their runs (/api/evals). */
  evals: EvalService;
  /** Keys issued through /api/v1/registered-keys, and their quotas. */
  registeredKeys: RegisteredKeys;
  /** ctl.yaml gateway.issue_tracker (POST /v1/issues/report); undefined: not configured. */
  issueTracker?: IssueTrackerConfig;
  /** The MCP server's sessions, tools and audit log. */
  mcp: McpService;
  /** A2A tasks and skills. */
  a2a: A2aService;
  /** Prompt compression: plans, engines, the savings log, compression combos. */
  compression: CompressionService;
  /** Database backups (DIR/backups/gateway). */
  backups: GatewayBackups;
  /** Routing policies (/api/policies), checked on every inference request. */
  policies: Policies;
  /** The compliance audit log of management changes. */
  audit: AuditLog;
  /** Restart and shutdown, when running in the daemon. */
  system: SystemControls;
  /** The gateway's own routes, called in process (MCP tools, A2A skills); set once the router exists. */
  internal: InProcessCall;
  log: Logger;
  version: string;
  /** When the component started (uptime in the health view). */
  startedAt: number;
  sleep: (ms: number, signal: AbortLike) => Promise<void>;
}
