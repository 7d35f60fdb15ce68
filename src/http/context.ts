import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';

/** Per-request state handed to every handler. */
export interface RequestContext {
  req: IncomingMessage;
  res: ServerResponse;
  /** Path parameters from the route pattern, already percent-decoded. */
  params: Record<string, string>;
  /** Parsed request URL (path + query); the host part is not meaningful. Parsed on first use. */
  url: URL;
  query: URLSearchParams;
  /** `url.pathname`, known without parsing the URL when the request target is plain. */
  path?: string;
  /** The matched route pattern (e.g. `/api/v2/silence/:silenceID`), or '' when nothing matched. */
  routePattern: string;
  /** X-Request-Id from the client when sane, else a generated one. */
  requestId: string;
  /** Client IP after trusted-proxy resolution; '' when unresolvable (unix socket). */
  clientIp: string;
  /** True when the request arrived over the control socket (trusted by file permissions). */
  viaSocket: boolean;
  /** Name of the listener that accepted the request ('unix' for the control socket). */
  listener: string;
  log: Logger;
  /** Cached body once read by the body helpers. */
  rawBody?: Buffer;
  /** Free slot for middleware of a component (auth principal, ...). */
  state: Record<string, unknown>;
}
