/**
 * The responses-over-WebSocket bridge. A client upgrades /v1/responses (or /responses,
 * /api/v1/responses) on the gateway's port with its API key; its first frame must be
 * `{type: "response.create", model, input, …}`. The bridge takes the one configured provider's
 * model from it (a bare id, `<provider>/<model>`, or `qtSd/<group>/<provider>/<model>`; any other
 * provider: error `bridge_ws_provider_required`), opens the upstream socket with the provider's
 * first enabled account, sends the frame with the upstream model id, and from then on relays every
 * frame both ways (upstream events, `response.created` and rate-limit events included) until
 * either side closes. The upstream address goes through the egress policy.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket, WebSocketServer } from 'ws';
import { lazyRequire } from '../../../http/lazy.js';
import { HttpError } from '../../../http/errors.js';
import type { RequestContext } from '../../../http/context.js';
import type { Principal } from '../../auth.js';
import type { GatewayServices } from '../../services.js';
import type { ProviderConfig } from '../../types.js';
import { GatewayError } from '../../errors.js';
import { domainHttpError } from '../../routes/errors.js';

const ws = lazyRequire<typeof import('ws')>('ws');

export const WS_PATHS = new Set(['/v1/responses', '/responses', '/api/v1/responses']);
const FIRST_FRAME_TIMEOUT_MS = 30_000;
const MAX_FRAME = 16 << 20;

export class BridgeError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The configured provider, checked: it exists, is enabled, is of the OpenAI kind and has an account. */
export function bridgeProvider(svc: GatewayServices): ProviderConfig {
  const id = svc.state.fileConfig.responsesWebsocket.provider;
  if (!id) throw new GatewayError('not-configured', 'the responses WebSocket bridge has no provider: set gateway.yaml responses_websocket.provider', { code: 'bridge_ws_not_configured' });
  const p = svc.state.catalog.providers.get(id)?.config;
  if (!p) throw new GatewayError('not-configured', `responses_websocket.provider ${id} is not a configured provider`, { code: 'bridge_ws_not_configured' });
  if (p.kind !== 'openai') throw new GatewayError('not-configured', `responses_websocket.provider ${id} is of kind ${p.kind}; the bridge speaks OpenAI's responses socket`, { code: 'bridge_ws_not_configured' });
  if (!p.enabled) throw new GatewayError('not-configured', `provider ${id} is disabled`, { code: 'provider_disabled' });
  return p;
}

/** The upstream model id a client's model names, or a BridgeError. */
export function bridgeModel(model: unknown, provider: string): string {
  if (typeof model !== 'string' || !model) throw new BridgeError('invalid_request', 'response.create needs a model');
  const parts = model.split('/');
  if (parts[0] === 'qtSd') {
    if (parts.length < 4 || parts[2] !== provider) throw new BridgeError('bridge_ws_provider_required', `this bridge serves provider ${provider}: use qtSd/<group>/${provider}/<model>`);
    return parts.slice(3).join('/');
  }
  if (parts.length === 1) return model;
  if (parts[0] === provider) return parts.slice(1).join('/');
  throw new BridgeError('bridge_ws_provider_required', `this bridge serves provider ${provider} only: send a bare model id (or ${provider}/<model>), not ${model}`);
}

function upstreamUrl(p: ProviderConfig): URL {
  const base = (p.baseUrl || 'https://api.openai.com/v1').replace(/\/+$/, '');
  const u = new URL(`${base}/responses`);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  return u;
}

const errorFrame = (code: string, message: string) => JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', code, message } });

export class WsBridge {
  private server: WebSocketServer | undefined;
  /** Open client sockets (closed when the gateway stops). */
  readonly open = new Set<WebSocket>();

  constructor(private readonly svc: () => GatewayServices) {}

  /** Upgrade: authenticate (401 on the handshake), then take the socket. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, ctx: RequestContext): void {
    let principal: Principal;
    try {
      bridgeProvider(this.svc());
      principal = this.svc().auth.inference(ctx);
    } catch (e) {
      const err = domainHttpError(e) ?? (e instanceof HttpError ? e : new HttpError(500, (e as Error).message));
      const body = JSON.stringify({ error: { message: err.message, type: 'invalid_request_error', code: err.code ?? null } });
      socket.end(`HTTP/1.1 ${err.status} ${err.status === 401 ? 'Unauthorized' : err.status === 503 ? 'Service Unavailable' : 'Error'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
      return;
    }
    this.server ??= new (ws().WebSocketServer)({ noServer: true, maxPayload: MAX_FRAME });
    this.server.handleUpgrade(req, socket, head, (client) => this.serve(client, principal));
  }

  private serve(client: WebSocket, principal: Principal): void {
    this.open.add(client);
    client.on('close', () => this.open.delete(client));
    const fail = (code: string, message: string) => {
      if (client.readyState === client.OPEN) client.send(errorFrame(code, message));
      client.close(1008, code.slice(0, 100));
    };
    const timer = setTimeout(() => fail('invalid_request', 'no response.create frame within 30 s'), FIRST_FRAME_TIMEOUT_MS);
    timer.unref();
    client.once('message', (data, isBinary) => {
      clearTimeout(timer);
      let frame: Record<string, unknown>;
      try {
        if (isBinary) throw new Error('binary');
        const parsed = JSON.parse(String(data)) as unknown;
        if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
        frame = parsed as Record<string, unknown>;
      } catch {
        return fail('invalid_request', 'the first frame must be a JSON response.create event');
      }
      if (frame.type !== 'response.create') return fail('invalid_request', `the first frame must be response.create, not ${JSON.stringify(frame.type)}`);
      let provider: ProviderConfig;
      let modelId: string;
      try {
        const svc = this.svc();
        provider = bridgeProvider(svc);
        modelId = bridgeModel(frame.model, provider.id);
        svc.auth.checkModel(principal, `${provider.id}/${modelId}`);
      } catch (e) {
        if (e instanceof BridgeError) return fail(e.code, e.message);
        if (e instanceof HttpError || e instanceof GatewayError) return fail(String(e.code ?? 'invalid_request'), e.message);
        return fail('internal_error', (e as Error).message);
      }
      void this.tunnel(client, provider, { ...frame, model: modelId }, fail);
    });
  }

  private async tunnel(client: WebSocket, p: ProviderConfig, first: Record<string, unknown>, fail: (code: string, message: string) => void): Promise<void> {
    const account = p.accounts.find((a) => a.enabled && a.apiKey);
    if (!account) return fail('provider_unavailable', `provider ${p.id} has no enabled account`);
    const url = upstreamUrl(p);
    let target;
    try {
      target = await this.svc().egress.resolve(url.hostname, Number(url.port || (url.protocol === 'wss:' ? 443 : 80)));
    } catch (e) {
      return fail('upstream_unreachable', (e as Error).message);
    }
    const dial = new URL(url.href);
    dial.hostname = target.host.includes(':') ? `[${target.host}]` : target.host;
    dial.port = String(target.port);
    const upstream = new (ws().WebSocket)(dial.href, {
      headers: { ...p.headers, Authorization: `Bearer ${account.apiKey}`, Host: url.host },
      ...(url.protocol === 'wss:' ? { servername: url.hostname } : {}),
      maxPayload: MAX_FRAME,
      handshakeTimeout: p.timeoutMs ?? 30_000,
    });
    const pending: { data: unknown; binary: boolean }[] = [];
    const onClient = (data: unknown, binary: boolean) => {
      if (upstream.readyState === upstream.OPEN) upstream.send(data as Buffer, { binary });
      else pending.push({ data, binary });
    };
    client.on('message', onClient);
    upstream.on('open', () => {
      upstream.send(JSON.stringify(first));
      for (const m of pending.splice(0)) upstream.send(m.data as Buffer, { binary: m.binary });
    });
    upstream.on('message', (data, binary) => {
      if (client.readyState === client.OPEN) client.send(data, { binary });
    });
    upstream.on('unexpected-response', (_req, res) => {
      fail('upstream_error', `upstream answered HTTP ${res.statusCode} to the WebSocket handshake`);
      upstream.terminate();
    });
    upstream.on('error', (e) => {
      if (client.readyState === client.OPEN) fail('upstream_error', e.message);
    });
    upstream.on('close', (code, reason) => {
      if (client.readyState === client.OPEN) client.close(code >= 1000 && code < 5000 && code !== 1005 && code !== 1006 ? code : 1011, reason);
    });
    client.on('close', () => {
      if (upstream.readyState === upstream.OPEN || upstream.readyState === upstream.CONNECTING) upstream.terminate();
    });
  }

  close(): void {
    for (const c of this.open) c.terminate();
    this.open.clear();
    this.server?.close();
  }
}
