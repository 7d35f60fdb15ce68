/**
 * The MCP server: one McpServer (the official SDK) per session, with the gateway's tools bound to
 * the session's caller; every tool call is audited. Sessions of the streamable-HTTP and SSE
 * transports are kept here by id, with the API key that opened them.
 */
import type { Logger } from 'pino';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Principal } from '../../auth.js';
import type { InProcessCall } from '../../in-process.js';
import type { GatewayServices } from '../../services.js';
import type { McpAudit } from './audit.js';

export type McpTransportKind = 'stream' | 'sse';

export interface McpSession {
  kind: McpTransportKind;
  transport: Transport & { close(): Promise<void> };
  server: McpServer;
  /** The API key that opened the session (undefined: the control socket, or no key). */
  keyId: string | undefined;
  openedAt: number;
}

export class McpService {
  readonly sessions = new Map<string, McpSession>();
  private toolList: unknown[] | undefined;
  call: InProcessCall | undefined;

  constructor(
    private readonly svc: () => GatewayServices,
    readonly audit: McpAudit,
    private readonly version: string,
    private readonly log: Logger,
  ) {}

  /**
   * A server with the tools, bound to a caller. The SDK (and zod, which the tools' schemas use) load
   * with the first session: MCP is off by default, and together they weigh ~20 MB of memory.
   */
  async newServer(principal: Principal, sessionId: () => string | undefined): Promise<McpServer> {
    const [{ McpServer }, { availableTools }] = await Promise.all([import('@modelcontextprotocol/sdk/server/mcp.js'), import('./tools.js')]);
    const server = new McpServer({ name: 'ctl-gateway', version: this.version });
    for (const tool of availableTools(this.svc())) {
      server.registerTool(tool.name, { title: tool.title, description: tool.description, inputSchema: tool.input }, async (args: Record<string, unknown>) => {
        const started = performance.now();
        let ok = false;
        let text: string;
        try {
          if (!this.call) throw new Error('the gateway is not ready');
          const out = await tool.run(args ?? {}, { svc: this.svc(), call: this.call, principal });
          ok = out.ok;
          text = out.text;
        } catch (e) {
          text = (e as Error).message;
        }
        this.audit.record({ at: this.svc().clock.now(), tool: tool.name, success: ok, durationMs: Math.round((performance.now() - started) * 10) / 10, apiKeyId: principal.key?.id, sessionId: sessionId(), ...(ok ? {} : { error: text.slice(0, 500) }) });
        return { content: [{ type: 'text' as const, text }], ...(ok ? {} : { isError: true }) };
      });
    }
    return server;
  }

  /** The tools as MCP lists them (name, title, description, inputSchema), asked of a server once. */
  async tools(): Promise<unknown[]> {
    if (this.toolList) return this.toolList;
    const [{ Client }, { InMemoryTransport }] = await Promise.all([import('@modelcontextprotocol/sdk/client/index.js'), import('@modelcontextprotocol/sdk/inMemory.js')]);
    const [a, b] = InMemoryTransport.createLinkedPair();
    const server = await this.newServer({ trusted: true }, () => undefined);
    const client = new Client({ name: 'ctl-tools-list', version: this.version });
    await server.connect(a);
    await client.connect(b);
    try {
      this.toolList = (await client.listTools()).tools;
    } finally {
      await client.close();
      await server.close();
    }
    return this.toolList;
  }

  /** Tools depend on configuration (search, fetch): forget the list when it changes. */
  configChanged(): void {
    this.toolList = undefined;
  }

  add(id: string, s: McpSession): void {
    this.sessions.set(id, s);
  }

  async drop(id: string): Promise<void> {
    const s = this.sessions.get(id);
    if (!s) return;
    this.sessions.delete(id);
    await s.server.close().catch((e: unknown) => this.log.debug({ err: e }, 'gateway: MCP session close'));
  }

  counts(): Record<McpTransportKind, number> {
    const out = { stream: 0, sse: 0 };
    for (const s of this.sessions.values()) out[s.kind]++;
    return out;
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.sessions.keys()].map((id) => this.drop(id)));
  }
}
