/**
 * Switches of the agent protocols: `mcpEnabled` and `a2aEnabled`, both off by default; gateway.yaml
 * `settings: {mcp_enabled, a2a_enabled}` sets them, `PATCH /api/settings` overrides the file.
 */
import { Type } from '@sinclair/typebox';
import { compile } from '../../http/schema.js';

export interface AgentSettings {
  mcpEnabled: boolean;
  a2aEnabled: boolean;
}

export const DEFAULT_AGENT_SETTINGS: AgentSettings = { mcpEnabled: false, a2aEnabled: false };

export const validateAgentSettingsPatch = compile(Type.Object({ mcpEnabled: Type.Optional(Type.Boolean()), a2aEnabled: Type.Optional(Type.Boolean()) }, { additionalProperties: false }));
