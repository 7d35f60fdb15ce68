/**
 * Which targets of a resolution can serve a non-chat operation: the provider kind has the operation
 * (and does not refuse this path and body), and the model's declared type is the operation's (a model
 * with no declared type is tried: the upstream decides). None: a 400 naming the first target and why.
 */
import { badRequest } from '../../../http/errors.js';
import { modelSpec, operationRefusal } from '../../providers/index.js';
import type { Resolution } from '../../routing/resolve.js';
import { withArticle } from './models.js';

type Target = Resolution['targets'][number];

export interface OperationNeed {
  /** Which adapter function serves it. */
  fn: 'jsonOperation' | 'formOperation' | 'streamOperation';
  /** Path under the provider's base URL. */
  path: string;
  /** The client's route, for the 400. */
  route: string;
  /** Words for "has no … endpoint". */
  endpoint: string;
  /** The model type that serves it. */
  type: string;
}

function refusal(t: Target, need: OperationNeed, body: Record<string, unknown>): string | undefined {
  const r = operationRefusal(t.provider.conn, need.fn, need.path, need.endpoint, body);
  if (r) return r;
  const spec = modelSpec(t.provider.conn, t.modelId) as { type?: string; typeDeclared?: boolean } | undefined;
  return spec?.typeDeclared && spec.type !== need.type ? `it is declared as ${withArticle(String(spec.type))} model` : undefined;
}

export function capableTargets(resolution: Resolution, need: OperationNeed, body: Record<string, unknown>): Target[] {
  const capable = resolution.targets.filter((t) => refusal(t, need, body) === undefined);
  if (capable.length === 0) {
    const t = resolution.targets[0]!;
    throw badRequest(`model ${t.ref} cannot serve ${need.route}: ${refusal(t, need, body)}`);
  }
  return capable;
}
