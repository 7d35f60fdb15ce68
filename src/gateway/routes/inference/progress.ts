/**
 * Progress events (`X-Gateway-Progress: true`): on a server-sent-events stream the gateway adds
 * `event: progress` frames, `{tokens_generated, elapsed_ms}`, every two seconds while the answer
 * streams, and a last one with `done: true` before the stream ends; the response carries
 * `X-Gateway-Progress: enabled`. Client SDKs skip events of a type they do not know. NDJSON streams
 * (Ollama) have no event types and get none; neither do JSON answers.
 */
import type { IncomingHttpHeaders } from 'node:http';

export const PROGRESS_INTERVAL_MS = 2000;

export function wantsProgress(headers: IncomingHttpHeaders, contentType: string): boolean {
  return String(headers['x-gateway-progress'] ?? '').trim().toLowerCase() === 'true' && contentType.startsWith('text/event-stream');
}

export class ProgressTracker {
  private tokens = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly startedAt: number,
    private readonly now: () => number,
    write: (frame: string) => void,
  ) {
    this.timer = setInterval(() => write(this.frame(false)), PROGRESS_INTERVAL_MS);
    this.timer.unref();
  }

  /** One generated piece of the answer (text, reasoning or a tool-call delta). */
  count(): void {
    this.tokens++;
  }

  frame(done: boolean): string {
    return `event: progress\ndata: ${JSON.stringify({ tokens_generated: this.tokens, elapsed_ms: Math.max(0, this.now() - this.startedAt), ...(done ? { done: true } : {}) })}\n\n`;
  }

  /** Stop the timer; the final frame. */
  finish(): string {
    clearInterval(this.timer);
    return this.frame(true);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
