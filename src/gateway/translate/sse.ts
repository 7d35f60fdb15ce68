/** SSE frame builders. Each returned string is one complete event, ready to write and flush. */

export function sseData(obj: unknown): string {
  return `data: ${JSON.stringify(obj)}\n\n`;
}

export function sseEvent(event: string, obj: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(obj)}\n\n`;
}

export function ndjson(obj: unknown): string {
  return `${JSON.stringify(obj)}\n`;
}
