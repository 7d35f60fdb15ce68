/**
 * Webhook subscriptions kept with the shared configuration (records of SharedConfigStore): a webhook
 * registered through one daemon receives the events of every daemon. Their deliveries are queued in
 * the shared database too (SqlDeliveryQueue in webhooks/store.ts).
 */
import type { Store } from '../../store/index.js';
import { WebhookStore, type WebhookRecord } from './store.js';
import type { SharedConfigStore } from '../config/pg-store.js';

export class SharedWebhookStore extends WebhookStore {
  constructor(
    local: Store,
    private readonly shared: SharedConfigStore,
  ) {
    super(local);
  }

  override settled(): Promise<void> {
    return this.shared.settled();
  }

  override list(): WebhookRecord[] {
    return this.shared.records<WebhookRecord>('webhook').sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
  }

  override get(id: string): WebhookRecord | undefined {
    return this.shared.records<WebhookRecord>('webhook').find((w) => w.id === id);
  }

  override save(w: WebhookRecord): void {
    const prev = this.get(w.id);
    this.shared.putRecord('webhook', w.id, { ...w, createdAt: prev?.createdAt ?? w.createdAt });
  }

  override delete(id: string): boolean {
    return this.shared.deleteRecord('webhook', id);
  }
}
