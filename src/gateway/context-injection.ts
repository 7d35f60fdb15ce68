/**
 * What the gateway adds to a chat request before routing it: the caller's relevant memories (and,
 * with skills, the skills offered as tools). `x-gateway-no-memory: true` skips all of it.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { CanonicalRequest } from './canonical.js';
import type { Principal } from './auth.js';
import type { GatewayServices } from './services.js';
import { selectMemories, withMemories } from './memory/inject.js';

export function injectionSkipped(headers: IncomingHttpHeaders): boolean {
  return String(headers['x-gateway-no-memory'] ?? '').trim().toLowerCase() === 'true';
}

export function injectContext(svc: GatewayServices, headers: IncomingHttpHeaders, req: CanonicalRequest, principal: Principal, sessionId: string | undefined): CanonicalRequest {
  if (injectionSkipped(headers)) return req;
  const cfg = svc.state.fileConfig.memory;
  if (!cfg.inject || !svc.memory.any()) return req;
  const memories = selectMemories(svc.memory, cfg, req, { apiKeyId: principal.key?.id, sessionId }, svc.clock.now());
  return withMemories(req, memories);
}
