import type { ServerResponse } from 'node:http';
import type { HttpError } from '../http/index.js';

/** LXD-style response envelope (microcluster renders these): every key is always present. */
export interface Envelope {
  type: 'sync' | 'async' | 'error';
  status: string;
  status_code: number;
  operation: string;
  error_code: number;
  error: string;
  metadata: unknown;
}

function write(res: ServerResponse, httpStatus: number, env: Envelope, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(env) + '\n';
  res.statusCode = httpStatus;
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/** 200 sync response; `metadata` defaults to `{}` as LXD's EmptySyncResponse. */
export function sendSync(res: ServerResponse, metadata: unknown = {}): void {
  write(res, 200, {
    type: 'sync',
    status: 'Success',
    status_code: 200,
    operation: '',
    error_code: 0,
    error: '',
    metadata,
  });
}

export function sendEnvelopeError(res: ServerResponse, err: HttpError): void {
  write(res, err.status, {
    type: 'error',
    status: '',
    status_code: 0,
    operation: '',
    error_code: err.status,
    error: err.message,
    metadata: null,
  });
}
