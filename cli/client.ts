import http from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { homedir } from 'node:os';

/** Global connection options (`--state-dir`, `--socket`, `--url`), set once by main.ts. */
export interface ClientOptions {
  stateDir?: string;
  socket?: string;
  url?: string;
  timeoutMs?: number;
}

let options: ClientOptions = {};

// node:https (and TLS with it) loads only for an https --url: the socket needs neither.
const https = (): typeof import('node:https') => createRequire(import.meta.url)('node:https') as typeof import('node:https');

/** The options main.ts set (for commands that open their own connections). */
export function clientOptions(): Readonly<ClientOptions> {
  return options;
}

export function setClientOptions(o: ClientOptions): void {
  options = o;
}

/** Same rule as the daemon: --state-dir, $CTL_STATE_DIR, /var/lib/ctl for root, else $XDG_STATE_HOME/ctl. */
export function stateDir(): string {
  if (options.stateDir) return options.stateDir;
  const env = process.env;
  if (env.CTL_STATE_DIR) return env.CTL_STATE_DIR;
  if (typeof process.getuid === 'function' && process.getuid() === 0) return '/var/lib/ctl';
  return join(env.XDG_STATE_HOME || join(homedir(), '.local', 'state'), 'ctl');
}

export function socketPath(): string {
  return options.socket ?? process.env.CTL_SOCKET ?? join(stateDir(), 'control.socket');
}

/** Where requests go, for messages. */
export function target(): string {
  return options.url ?? socketPath();
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
  }
}

export class UnreachableError extends Error {}

export interface RequestSpec {
  /** Server name: the Host on the control socket (core, alertmanager, gateway, pipeline, nodes). */
  host: string;
  method?: string;
  path: string;
  query?: Record<string, string | number | boolean | undefined | (string | number)[]>;
  body?: unknown;
  /** Raw body (string/Buffer) with its own content type, instead of JSON. */
  raw?: { data: string | Buffer; contentType: string };
  headers?: Record<string, string>;
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** Parsed JSON when the body is JSON, else the text. */
  data: unknown;
}

function buildPath(spec: RequestSpec): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(spec.query ?? {})) {
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const item of v) qs.append(k, String(item));
    else qs.append(k, String(v));
  }
  const q = qs.toString();
  return spec.path + (q ? `?${q}` : '');
}

/** Send one request over the socket (Host-routed) or to --url; resolves for any HTTP status. */
export function send(spec: RequestSpec): Promise<RawResponse> {
  const path = buildPath(spec);
  const headers: Record<string, string | number> = { Accept: 'application/json', ...(spec.headers ?? {}) };
  let payload: string | Buffer | undefined;
  if (spec.raw) {
    payload = spec.raw.data;
    headers['Content-Type'] = spec.raw.contentType;
  } else if (spec.body !== undefined) {
    payload = JSON.stringify(spec.body);
    headers['Content-Type'] = 'application/json';
  }
  if (payload !== undefined) headers['Content-Length'] = Buffer.byteLength(payload);
  let req: http.ClientRequest;
  const method = spec.method ?? 'GET';
  return new Promise<RawResponse>((resolve, reject) => {
    const onResponse = (res: http.IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let data: unknown = text;
        if (/json/.test(String(res.headers['content-type'] ?? '')) && text) {
          try {
            data = JSON.parse(text);
          } catch {
            /* keep text */
          }
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, data });
      });
      res.on('error', reject);
    };
    if (options.url) {
      const base = new URL(options.url);
      const url = new URL(path.replace(/^\//, ''), base.href.endsWith('/') ? base.href : base.href + '/');
      const mod = url.protocol === 'https:' ? https() : http;
      req = mod.request(url, { method, headers, rejectUnauthorized: process.env.CTL_INSECURE !== '1' }, onResponse);
    } else {
      headers.Host = spec.host;
      req = http.request({ socketPath: socketPath(), path, method, headers }, onResponse);
    }
    req.setTimeout(options.timeoutMs ?? 120_000, () => req.destroy(new Error('timed out waiting for the daemon')));
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (['ENOENT', 'ECONNREFUSED', 'ECONNRESET', 'EACCES', 'ENOTSOCK', 'EHOSTUNREACH', 'ETIMEDOUT'].includes(e.code ?? '') || /timed out/.test(e.message)) {
        reject(new UnreachableError(`cannot reach the ctl daemon at ${target()}: ${e.code ?? e.message} (is \`ctl serve\` running?)`));
      } else reject(e);
    });
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** The human message inside any of the six APIs' error bodies. */
export function errorMessage(data: unknown, status: number): string {
  if (typeof data === 'string') return data.trim() || `HTTP ${status}`;
  if (data && typeof data === 'object') {
    const o = data as Record<string, unknown>;
    if (typeof o.error === 'string' && o.error) return o.error; // LXD envelope, Ollama
    if (o.error && typeof o.error === 'object' && typeof (o.error as Record<string, unknown>).message === 'string') {
      return (o.error as Record<string, string>).message!; // OpenAI / Anthropic / Gemini
    }
    if (typeof o.detail === 'string') return o.detail; // pipeline
    if (Array.isArray(o.detail)) return JSON.stringify(o.detail);
    if (typeof o.ErrMessage === 'string' && o.ErrMessage) return o.ErrMessage; // node monitor
    if (typeof o.message === 'string') return o.message; // alertmanager framework errors, rate limiter
  }
  return `HTTP ${status}`;
}

/** Send and return the parsed body; HTTP >= 400 throws ApiError with the API's message. */
export async function request<T = unknown>(spec: RequestSpec): Promise<T> {
  const res = await send(spec);
  if (res.status >= 400) throw new ApiError(res.status, errorMessage(res.data, res.status), res.data);
  return res.data as T;
}

/** Core API call: unwraps the LXD envelope's metadata. */
export async function core<T = unknown>(method: string, path: string, body?: unknown, query?: RequestSpec['query']): Promise<T> {
  const env = await request<{ metadata: T }>({ host: 'core', method, path, body, query });
  return env.metadata;
}
