/**
 * `ctl gateway mcp`: the MCP stdio transport. An MCP client (an editor, Claude Desktop) starts this
 * command and speaks JSON-RPC on its stdin and stdout; each message is passed to the daemon's
 * streamable-HTTP endpoint (/api/mcp/stream, over the control socket, or --url with an API key that
 * has the mcp scope) and every answer and notification is written back. Diagnostics go to stderr.
 */
import type { Command } from 'commander';
import { clientOptions, socketPath } from './client.js';
import { action } from './run.js';
import { lazyRequire } from '../src/http/lazy.js';

const undici = lazyRequire<typeof import('undici')>('undici');

export function registerMcp(g: Command, auth: () => Record<string, string>): void {
  g.command('mcp')
    .description('MCP over stdio: bridge stdin/stdout to the gateway MCP server (point an MCP client at this command)')
    .action(
      action(async () => {
        const [{ StdioServerTransport }, { StreamableHTTPClientTransport }] = await Promise.all([
          import('@modelcontextprotocol/sdk/server/stdio.js'),
          import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
        ]);
        const { Agent, fetch } = undici();
        const remote = clientOptions().url;
        const url = remote ? new URL('api/mcp/stream', remote.endsWith('/') ? remote : `${remote}/`) : new URL('http://gateway/api/mcp/stream');
        const dispatcher = remote ? undefined : new Agent({ connect: { socketPath: socketPath() } });
        const upstream = new StreamableHTTPClientTransport(url, {
          requestInit: { headers: auth() },
          fetch: ((u: string | URL, init?: RequestInit) => fetch(u, { ...(init as object), ...(dispatcher ? { dispatcher } : {}) } as never)) as never,
        });
        const local = new StdioServerTransport();
        let closing = false;
        const close = async (why?: string) => {
          if (closing) return;
          closing = true;
          if (why) process.stderr.write(`ctl gateway mcp: ${why}\n`);
          await upstream.close().catch(() => undefined);
          await local.close().catch(() => undefined);
          await dispatcher?.close().catch(() => undefined);
        };
        local.onmessage = (m) => void upstream.send(m).catch((e: Error) => close(`the daemon refused a message: ${e.message}`));
        upstream.onmessage = (m) => void local.send(m);
        upstream.onerror = (e) => process.stderr.write(`ctl gateway mcp: ${e.message}\n`);
        await upstream.start();
        await local.start();
        await new Promise<void>((resolve) => {
          local.onclose = () => void close().then(resolve);
          process.stdin.on('end', () => void close().then(resolve));
        });
      }),
    );
}
