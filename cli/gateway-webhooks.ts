/** `ctl gateway webhook …`: the gateway's outbound webhooks (/api/webhooks*). */
import type { Command } from 'commander';
import { request } from './client.js';
import { outputFormat, printData, printObject, printRows } from './output.js';
import { action, collect, intOption } from './run.js';

interface HookView {
  id: string;
  url: string;
  events: string[];
  secret: string;
  description: string;
  enabled: boolean;
  createdAt: string;
}

interface DeliveryView {
  id: string;
  event: string;
  status: string;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: string;
  nextAttemptAt: string | null;
}

const enc = encodeURIComponent;

export function registerWebhooks(g: Command, auth: () => Record<string, string>): void {
  const api = <T>(method: string, path: string, body?: unknown, query?: Record<string, string | number | undefined>) => request<T>({ host: 'gateway', method, path, body, query, headers: auth() });
  const w = g.command('webhook').description('outbound webhooks (/api/webhooks*): add, list, get, set, rm, test, deliveries, events');

  w.command('add <url>')
    .description('add a webhook; prints its secret once (payloads are signed with it, Standard Webhooks)')
    .option('--event <type>', 'event type to send (repeatable; default: all)', collect, [])
    .option('--secret <whsec>', 'use this secret (whsec_ and base64) instead of a generated one')
    .option('--description <text>', 'what it is for')
    .option('--disabled', 'add it disabled')
    .action(
      action(async (url: string, o: { event: string[]; secret?: string; description?: string; disabled?: boolean }) => {
        const v = await api<HookView & { secret: string }>('POST', '/api/webhooks', {
          url,
          ...(o.event.length ? { events: o.event } : {}),
          ...(o.secret ? { secret: o.secret } : {}),
          ...(o.description ? { description: o.description } : {}),
          ...(o.disabled ? { enabled: false } : {}),
        });
        if (outputFormat() !== 'table') return printData(v);
        process.stdout.write(`${v.secret}\n`);
        process.stderr.write(`added webhook ${v.id}; store the secret now: it is not shown again\n`);
      }),
    );
  w.command('list')
    .description('every webhook (secrets masked)')
    .action(
      action(async () => {
        const r = await api<{ webhooks: HookView[] }>('GET', '/api/webhooks');
        await printRows(
          r.webhooks,
          [
            { header: 'id', get: (x) => x.id },
            { header: 'url', get: (x) => x.url },
            { header: 'events', get: (x) => x.events.join(',') },
            { header: 'enabled', get: (x) => x.enabled },
            { header: 'description', get: (x) => x.description },
          ],
          r,
        );
      }),
    );
  w.command('get <id>')
    .description('one webhook')
    .action(
      action(async (id: string) => {
        const v = await api<HookView>('GET', `/api/webhooks/${enc(id)}`);
        await printObject(
          [
            ['id', v.id],
            ['url', v.url],
            ['events', v.events.join(', ')],
            ['enabled', v.enabled],
            ['secret', v.secret],
            ['description', v.description],
            ['created', v.createdAt],
          ],
          v,
        );
      }),
    );
  w.command('set <id>')
    .description('change a webhook')
    .option('--url <url>', 'new target URL')
    .option('--event <type>', 'event types (repeatable; replaces the list)', collect, [])
    .option('--enable', 'enable it')
    .option('--disable', 'disable it')
    .option('--description <text>', 'what it is for')
    .action(
      action(async (id: string, o: { url?: string; event: string[]; enable?: boolean; disable?: boolean; description?: string }) => {
        const v = await api<HookView>('PATCH', `/api/webhooks/${enc(id)}`, {
          ...(o.url ? { url: o.url } : {}),
          ...(o.event.length ? { events: o.event } : {}),
          ...(o.enable ? { enabled: true } : o.disable ? { enabled: false } : {}),
          ...(o.description !== undefined ? { description: o.description } : {}),
        });
        if (outputFormat() !== 'table') return printData(v);
        process.stdout.write(`updated webhook ${v.id}\n`);
      }),
    );
  w.command('rm <id>')
    .description('delete a webhook (its pending deliveries are dropped)')
    .action(
      action(async (id: string) => {
        const v = await api<{ id: string }>('DELETE', `/api/webhooks/${enc(id)}`);
        if (outputFormat() !== 'table') return printData(v);
        process.stdout.write(`deleted webhook ${v.id}\n`);
      }),
    );
  w.command('test <id>')
    .description('send a test payload now; exit status 1 when it was not delivered')
    .action(
      action(async (id: string) => {
        const v = await api<{ delivered: boolean; status: number | null; error: string | null; durationMs: number }>('POST', `/api/webhooks/${enc(id)}/test`);
        if (!v.delivered) process.exitCode = 1;
        if (outputFormat() !== 'table') return printData(v);
        process.stdout.write(v.delivered ? `delivered: HTTP ${v.status} in ${v.durationMs} ms\n` : `not delivered: ${v.error}\n`);
      }),
    );
  w.command('deliveries <id>')
    .description('recent deliveries of a webhook with their status and attempts')
    .option('--limit <n>', 'how many (1-500)', intOption('--limit'), 50)
    .action(
      action(async (id: string, o: { limit: number }) => {
        const r = await api<{ deliveries: DeliveryView[] }>('GET', `/api/webhooks/${enc(id)}/deliveries`, undefined, { limit: o.limit });
        await printRows(
          r.deliveries,
          [
            { header: 'id', get: (x) => x.id },
            { header: 'event', get: (x) => x.event },
            { header: 'status', get: (x) => x.status },
            { header: 'attempts', get: (x) => x.attempts },
            { header: 'last', get: (x) => x.lastStatus ?? x.lastError ?? '' },
            { header: 'next attempt', get: (x) => x.nextAttemptAt ?? '' },
            { header: 'created', get: (x) => x.createdAt },
          ],
          r,
        );
      }),
    );
  w.command('events')
    .description('the event types a webhook can subscribe to')
    .action(
      action(async () => {
        const r = await api<{ events: { type: string; description: string }[] }>('GET', '/api/webhooks/events');
        await printRows(
          r.events,
          [
            { header: 'event', get: (x) => x.type },
            { header: 'description', get: (x) => x.description },
          ],
          r,
        );
      }),
    );
}
