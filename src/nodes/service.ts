import type { Logger } from 'pino';
import type { Clock } from '../http/clock.js';
import type { Egress } from '../egress/index.js';
import type { NodesConfig } from './config.js';
import type { Hub, Peer } from './hub.js';
import type { LanguagePacks } from './languages.js';
import type { NodeListCache } from './node-list.js';
import type { NodesData } from './data.js';

/** Everything a method needs; built once per component instance. */
export interface Services {
  config: NodesConfig;
  store: NodesData;
  clock: Clock;
  egress: Egress;
  log: Logger;
  version: string;
  languages: LanguagePacks;
  hub: Hub;
  nodeLists: NodeListCache;
}

/** One method call, from POST /api or a WebSocket frame. */
export interface Call {
  /** The method name as requested. */
  method: string;
  /** `Value` of the envelope (form fields arrive as strings). */
  value: Record<string, unknown>;
  /** True for application/x-www-form-urlencoded requests. */
  form: boolean;
  /** The authorised account, or undefined. */
  accountId: number | undefined;
  /** The client for per-client limits: its IP, or `unix` on the control socket. */
  client: string;
  /** The WebSocket session that sent the call, if any. */
  peer?: Peer;
}
