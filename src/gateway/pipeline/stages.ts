/**
 * The stages every inference route shares: 'listen' (the client's close listener, and from here on a
 * failure is recorded), 'route' (model resolution and the key's allow-list), 'concurrency' (the
 * global slot: at once, else the queue, else 429). Each is built once per route with only the
 * services it uses.
 */
import { RequestAbort } from '../abort.js';
import { resolveFor, type ResolveDeps } from '../completion.js';
import type { GatewayServices } from '../services.js';
import type { Flight, Stage, Verdict } from './stage.js';

/** Wire the client's close listener to the flight's abort; failures are recorded from here on. */
export function listenStage(): Stage<Flight> {
  return {
    name: 'listen',
    run(f) {
      const abort = new RequestAbort();
      const res = f.ctx.res;
      const onClose = () => {
        if (!res.writableFinished) abort.abort();
      };
      // on, not once: the undo takes it off again (once would wrap it in one more closure per request).
      res.on('close', onClose);
      f.undo.push(() => void res.off('close', onClose));
      f.abort = abort;
      f.recording = true;
      return 'next';
    },
  };
}

/** Resolve the flight's model (400, 403, 404 when it cannot be served to this key). */
export function routeStage<F extends Flight>(svc: ResolveDeps, model: (f: F) => string): Stage<F> {
  return {
    name: 'route',
    run(f) {
      f.resolution = resolveFor(svc, model(f), f.principal, f.providerScope);
      return 'next';
    },
  };
}

const next = (): Verdict => 'next';

/** Take a global concurrency slot (a slot at once, else wait in the queue; 429 when full). */
export function concurrencyStage(svc: Pick<GatewayServices, 'concurrency'>): Stage<Flight> {
  return {
    name: 'concurrency',
    run(f) {
      const release = svc.concurrency.tryGlobal();
      if (release) {
        f.undo.push(release);
        return 'next';
      }
      return svc.concurrency.acquireGlobal(f.abort!).then((r) => {
        f.undo.push(r);
        return next();
      });
    },
  };
}
