/** The webhook event types (contract), and the emitter other parts of the gateway call. */
export const WEBHOOK_EVENTS = [
  'request.completed',
  'request.failed',
  'budget.warning',
  'budget.exceeded',
  'quota.exhausted',
  'key.created',
  'key.revoked',
  'provider.circuit_opened',
  'provider.circuit_closed',
  'batch.completed',
  'batch.failed',
  'batch.cancelled',
  'batch.expired',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export const EVENT_DESCRIPTIONS: Record<WebhookEvent, string> = {
  'request.completed': 'an inference request was answered (2xx)',
  'request.failed': 'an inference request failed (4xx or 5xx after routing, or the client left)',
  'budget.warning': "an API key's spend passed its budget's warning threshold",
  'budget.exceeded': 'an API key was refused because a budget window is spent',
  'quota.exhausted': 'an API key was refused because a token limit is used up',
  'key.created': 'an API key was created',
  'key.revoked': 'an API key was revoked',
  'provider.circuit_opened': "a provider's circuit breaker opened",
  'provider.circuit_closed': "a provider's circuit breaker closed again",
  'batch.completed': 'a batch completed',
  'batch.failed': 'a batch failed validation or could not run',
  'batch.cancelled': 'a batch was cancelled',
  'batch.expired': 'a batch did not finish within its 24 h window',
};

/** What emits events; a no-op until webhooks exist. */
export interface WebhookEmitter {
  emit(event: WebhookEvent, data: Record<string, unknown>): void;
}
