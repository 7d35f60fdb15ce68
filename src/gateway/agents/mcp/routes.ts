/**
 * MCP over HTTP:
 *   GET/POST/DELETE /api/mcp/stream   streamable HTTP (sessions by the mcp-session-id header)
 *   GET  /api/mcp/sse                 SSE: opens the event stream; its endpoint event names
 *   POST /api/mcp/sse?sessionId=…     the message endpoint
 * Both need mcpEnabled (503 otherwise) and a Bearer API key with the `mcp` scope (401 without a
 * key, 403 without the scope; the control socket is trusted). A session id of the other transport
 * is a 400. Management (dashboard) auth: GET /api/mcp/status, /api/mcp/tools, /api/mcp/audit
 * (limit, offset, tool, success, apiKeyId) and /api/mcp/audit/stats.
 */
import { randomUUID } from 'node:crypto';
import type { RequestContext } from '../../../http/context.js';
import { readJson } from '../../../http/body.js';
import { badRequest, HttpError } from '../../../http/errors.js';
import type { Router } from '../../../http/router.js';
import { intQuery, ok } from '../../routes/common.js';
import type { GatewayServices } from '../../services.js';
import type { McpService, McpSession } from './server.js';

const MCP_BODY_LIMIT = 4 << 20;

export function mcpRoutes(r: Router, svc: GatewayServices, mcp: McpService): void {
  const open = (route: ReturnType<Router['get']>) => route.tag('auth', 'public');
  const m = (route: ReturnType<Router['get']>) => route.tag('auth', 'management');

  const gate = (ctx: RequestContext) => {
    if (!svc.runtime.general.value.mcpEnabled) throw new HttpError(503, 'MCP is disabled (PATCH /api/settings {"mcpEnabled": true}, or gateway.yaml settings.mcp_enabled)', { code: 'mcp_disabled' });
    return svc.auth.mcp(ctx);
  };
  const sessionOf = (ctx: RequestContext, id: string, kind: McpSession['kind']): McpSession => {
    const s = mcp.sessions.get(id);
    if (!s) throw new HttpError(404, `MCP session ${id} not found (it ended, or the gateway restarted): start a new one`, { code: 'mcp_session_not_found' });
    if (s.kind !== kind) throw badRequest(`MCP session ${id} belongs to the ${s.kind === 'sse' ? 'SSE (/api/mcp/sse)' : 'streamable HTTP (/api/mcp/stream)'} transport`, { code: 'mcp_transport_mismatch' });
    const principal = ctx.state.principal as { key?: { id: string } } | undefined;
    if (s.keyId !== principal?.key?.id) throw new HttpError(403, 'this MCP session belongs to another API key', { code: 'mcp_session_forbidden' });
    return s;
  };

  // ---- streamable HTTP ----
  const stream = async (ctx: RequestContext) => {
    const principal = gate(ctx);
    ctx.state.principal = principal;
    const header = ctx.req.headers['mcp-session-id'];
    const id = typeof header === 'string' ? header : undefined;
    const body = ctx.req.method === 'POST' ? await readJson(ctx, { limit: MCP_BODY_LIMIT }) : undefined;
    if (id !== undefined) {
      const s = sessionOf(ctx, id, 'stream');
      await (s.transport as unknown as { handleRequest(req: unknown, res: unknown, body?: unknown): Promise<void> }).handleRequest(ctx.req, ctx.res, body);
      return;
    }
    if (ctx.req.method !== 'POST') throw badRequest('mcp-session-id header is required (start a session with an initialize POST)', { code: 'mcp_session_required' });
    const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
    const { isInitializeRequest } = await import('@modelcontextprotocol/sdk/types.js');
    if (!isInitializeRequest(body)) throw badRequest('the first request of an MCP session must be initialize', { code: 'mcp_session_required' });
    let sid: string | undefined;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (newId) => {
        sid = newId;
        mcp.add(newId, { kind: 'stream', transport, server, keyId: principal.key?.id, openedAt: svc.clock.now() });
      },
    });
    transport.onclose = () => {
      if (sid) void mcp.drop(sid);
    };
    const server = await mcp.newServer(principal, () => sid);
    await server.connect(transport);
    await transport.handleRequest(ctx.req, ctx.res, body);
  };
  open(r.post('/api/mcp/stream', stream));
  open(r.get('/api/mcp/stream', stream));
  open(r.delete('/api/mcp/stream', stream));

  // ---- SSE ----
  open(
    r.get('/api/mcp/sse', async (ctx) => {
      const principal = gate(ctx);
      if (ctx.req.headers['mcp-session-id'] !== undefined) throw badRequest('this is the SSE transport; streamable HTTP sessions use /api/mcp/stream', { code: 'mcp_transport_mismatch' });
      const { SSEServerTransport } = await import('@modelcontextprotocol/sdk/server/sse.js');
      const transport = new SSEServerTransport('/api/mcp/sse', ctx.res);
      const id = transport.sessionId;
      const server = await mcp.newServer(principal, () => id);
      mcp.add(id, { kind: 'sse', transport, server, keyId: principal.key?.id, openedAt: svc.clock.now() });
      ctx.res.on('close', () => void mcp.drop(id));
      await server.connect(transport);
    }),
  );
  open(
    r.post('/api/mcp/sse', async (ctx) => {
      ctx.state.principal = gate(ctx);
      const id = ctx.query.get('sessionId');
      if (!id) throw badRequest('sessionId query parameter is required (the SSE stream’s endpoint event gives it)', { code: 'mcp_session_required' });
      const s = sessionOf(ctx, id, 'sse');
      const body = await readJson(ctx, { limit: MCP_BODY_LIMIT });
      await (s.transport as unknown as { handlePostMessage(req: unknown, res: unknown, body?: unknown): Promise<void> }).handlePostMessage(ctx.req, ctx.res, body);
    }),
  );

  // ---- management views ----
  m(
    r.get('/api/mcp/status', (ctx) => {
      const a = mcp.audit.stats();
      ok(ctx, {
        enabled: svc.runtime.general.value.mcpEnabled,
        transports: { stream: '/api/mcp/stream', sse: '/api/mcp/sse', stdio: 'ctl gateway mcp' },
        sessions: mcp.counts(),
        calls: { total: a.total, failed: a.failed },
      });
    }),
  );
  m(r.get('/api/mcp/tools', async (ctx) => ok(ctx, { tools: await mcp.tools() })));
  m(
    r.get('/api/mcp/audit', (ctx) => {
      const limit = intQuery(ctx, 'limit', 50, 1, 500);
      const offset = intQuery(ctx, 'offset', 0, 0, 1_000_000_000);
      const success = ctx.query.get('success');
      if (success !== null && success !== 'true' && success !== 'false') throw badRequest('query parameter success must be true or false');
      const { rows, total } = mcp.audit.list({ tool: ctx.query.get('tool') || undefined, apiKeyId: ctx.query.get('apiKeyId') || undefined, ...(success !== null ? { success: success === 'true' } : {}) }, offset, limit);
      ok(ctx, { entries: rows.map((e) => ({ ...e, at: new Date(e.at).toISOString(), apiKeyId: e.apiKeyId ?? null, error: e.error ?? null })), total, limit, offset });
    }),
  );
  m(r.get('/api/mcp/audit/stats', (ctx) => ok(ctx, mcp.audit.stats())));
}
