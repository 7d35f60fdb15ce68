import { HttpError } from '../http/errors.js';
import { sendJson } from '../http/respond.js';
import { Router } from '../http/router.js';
import type { ComponentInstance } from '../http/component.js';

/**
 * What stands in for a component whose start failed (a bad gateway.yaml, alertmanager.yml, ...):
 * every request on its listener and its socket host answers 503 with the reason, so the other APIs
 * keep running and a client sees why. The daemon tries to create the real component again on SIGHUP.
 */
export function downComponent(name: string, reason: string): ComponentInstance {
  const message = `${name} is down: ${reason}`;
  return {
    router: new Router(),
    before() {
      throw new HttpError(503, message, { headers: { 'Retry-After': '30' } });
    },
    renderError(ctx, err) {
      sendJson(ctx.res, err.status, { error: err.message, status: err.status }, err.headers);
    },
  };
}
