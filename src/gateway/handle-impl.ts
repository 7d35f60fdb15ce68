/**
 * The in-process chat function (GatewayHandle) other components call: any model id the gateway
 * resolves works, with the same routing, fallback and usage recording as HTTP requests (endpoint
 * `internal`, no API key: in-process callers are trusted).
 */
import { randomUUID } from 'node:crypto';
import { gatewayHttpError } from './routes/errors.js';
import type { CanonicalRequest, Message } from './canonical.js';
import { textOf } from './canonical.js';
import { attemptsOf, recordRequest, resolveFor, startCompletion } from './completion.js';
import type { GatewayChatRequest, GatewayChatResult, GatewayHandle } from '../http/gateway-handle.js';
import type { Resolution } from './routing/resolve.js';
import type { GatewayServices } from './services.js';

export function toCanonical(req: GatewayChatRequest): CanonicalRequest {
  const system: string[] = [];
  const messages: Message[] = [];
  for (const m of req.messages) {
    if (m.role === 'system' && messages.length === 0) system.push(m.content);
    else if (m.role === 'system') messages.push({ role: 'system', content: [{ type: 'text', text: m.content }] });
    else messages.push({ role: m.role, content: [{ type: 'text', text: m.content }] });
  }
  const out: CanonicalRequest = { model: req.model, messages, stream: false };
  if (system.length > 0) out.system = system.join('\n\n');
  if (req.temperature !== undefined) out.temperature = req.temperature;
  if (req.max_tokens !== undefined) out.maxTokens = req.max_tokens;
  if (req.json) out.responseFormat = { type: 'json_object' };
  return out;
}

export function buildHandle(svc: GatewayServices): GatewayHandle {
  return {
    async chat(req, opts = {}): Promise<GatewayChatResult> {
      const canonical = toCanonical(req);
      const principal = { trusted: true };
      const requestId = randomUUID();
      const startedAt = svc.clock.now();
      const info = { endpoint: 'internal', requestId, principal, stream: false, model: req.model };
      const signal = opts.signal ?? new AbortController().signal;
      let resolution: Resolution | undefined;
      let release: (() => void) | undefined;
      try {
        resolution = resolveFor(svc, req.model, principal);
        release = svc.concurrency.tryGlobal() ?? (await svc.concurrency.acquireGlobal(signal));
        const started = await startCompletion(svc, { canonical, principal, endpoint: 'internal', requestId, signal }, resolution);
        release();
        release = undefined;
        if (started.result.stream) {
          started.result.cancel();
          throw new Error('upstream answered a non-streaming request with a stream');
        }
        const response = started.result.response;
        recordRequest(svc, {
          input: info,
          resolution,
          subject: started.subject,
          status: 200,
          usage: response.usage,
          attempts: started.attempts,
          failedAttempts: started.failedAttempts,
          startedAt,
          ttfbMs: started.latencyMs,
        });
        const u = response.usage;
        return {
          content: textOf(response.content),
          model: started.subject.ref,
          provider: started.subject.provider.config.id,
          usage: { prompt_tokens: u.inputTokens, completion_tokens: u.outputTokens, total_tokens: u.inputTokens + u.outputTokens },
        };
      } catch (e) {
        release?.();
        const err = gatewayHttpError(e);
        const { attempts, failedAttempts } = attemptsOf(e);
        recordRequest(svc, {
          input: info,
          ...(resolution ? { resolution } : {}),
          status: err.status,
          error: err.message,
          attempts,
          failedAttempts,
          startedAt,
        });
        throw err;
      }
    },
  };
}
