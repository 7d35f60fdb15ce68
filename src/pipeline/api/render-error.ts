import type { RequestContext } from '../../http/context.js';
import type { HttpError } from '../../http/errors.js';
import { sendJson } from '../../http/respond.js';

/** The pipeline's wire error: `{"detail": "..."}` with the status (FastAPI's texts for unknown paths and methods). */
export function renderError(ctx: RequestContext, err: HttpError): void {
  let detail = err.message;
  if (err.status === 404 && err.code === 'not_found' && ctx.routePattern === '') detail = 'Not Found';
  else if (err.status === 405) detail = 'Method Not Allowed';
  else if (err.status === 500) detail = 'Internal Server Error';
  else if (err.status === 429 && !detail) detail = 'Too Many Requests';
  sendJson(ctx.res, err.status, { detail });
}
