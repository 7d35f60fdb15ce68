/**
 * gateway.yaml `responses_websocket: {provider: <id>}`: the one OpenAI-kind provider the
 * responses-over-WebSocket bridge tunnels to (its base URL with ws(s) and `/responses`).
 */
import { Type } from '@sinclair/typebox';
import { compile, describeErrors } from '../../../http/schema.js';

export interface WsBridgeConfig {
  provider?: string;
}

const validate = compile(Type.Object({ provider: Type.Optional(Type.String({ minLength: 1 })) }, { additionalProperties: false }));

export function parseWsBridge(raw: unknown): WsBridgeConfig {
  if (raw === undefined || raw === null) return {};
  if (!validate(raw)) throw new Error(describeErrors(validate.errors, 'responses_websocket'));
  return raw as WsBridgeConfig;
}
