import type { ServerResponse } from 'node:http';

/** Write a JSON body with an exact status; `body === undefined` writes an empty body. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string | number> = {},
  trailingNewline = false,
): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.end();
    return;
  }
  const text = body === undefined ? '' : JSON.stringify(body) + (trailingNewline ? '\n' : '');
  // One writeHead (merged with headers set earlier) and one end: Node sends them in one write.
  const all: Record<string, string | number> = { ...headers, 'Content-Length': Buffer.byteLength(text) };
  if (body !== undefined && !res.hasHeader('content-type') && !hasKey(headers, 'content-type')) all['Content-Type'] = 'application/json';
  res.writeHead(status, all);
  res.end(text);
}

function hasKey(headers: Record<string, unknown>, lower: string): boolean {
  for (const k in headers) if (k.toLowerCase() === lower) return true;
  return false;
}

/** Write a text body. */
export function sendText(
  res: ServerResponse,
  status: number,
  text: string,
  contentType = 'text/plain; charset=utf-8',
  headers: Record<string, string | number> = {},
): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.end();
    return;
  }
  res.statusCode = status;
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/** 200/204-style answer with no body and no content type (Alertmanager's POST /alerts does this). */
export function sendEmpty(res: ServerResponse, status = 200, headers: Record<string, string | number> = {}): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.end();
    return;
  }
  res.statusCode = status;
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.setHeader('Content-Length', 0);
  res.end();
}
