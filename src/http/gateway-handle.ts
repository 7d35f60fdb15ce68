/**
 * The gateway's in-process interface, used by other components (the pipeline drafts posts through it).
 * Any model id the gateway resolves (`provider/model`, alias, combo) works here. A contract of the kit,
 * like ComponentDefinition: the gateway implements it, the daemon passes it on, the pipeline calls it,
 * and neither component imports the other.
 */
export interface GatewayChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface GatewayChatRequest {
  model: string;
  messages: GatewayChatMessage[];
  temperature?: number;
  max_tokens?: number;
  /** Ask for a JSON object answer where the provider supports it. */
  json?: boolean;
}

export interface GatewayChatResult {
  content: string;
  /** The model that answered (after alias/combo resolution). */
  model: string;
  provider: string;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

export interface GatewayHandle {
  chat(req: GatewayChatRequest, opts?: { signal?: AbortSignal }): Promise<GatewayChatResult>;
}
