/**
 * The strings Alertmanager 0.25 names groups with: a route's key (its matchers and its parents',
 * `{}/{severity="page"}`) and the group key (`{}:{alertname="X", team="a"}`), as webhooks receive
 * them in `groupKey` and the notification log keys them.
 */
import type { RouteNode } from '../config/runtime.js';
import type { LabelSet } from '../labels.js';
import { goQuote } from '../timefmt.js';

/** labels.Matchers.String(): `{a="b",c=~"d"}`. */
function matchersString(route: RouteNode): string {
  return '{' + route.matchers.map((m) => `${m.name}${m.type}${goQuote(m.value)}`).join(',') + '}';
}

/** Route.Key() of every node of a route tree. */
export function routeKeys(root: RouteNode): Map<RouteNode, string> {
  const keys = new Map<RouteNode, string>();
  const walk = (node: RouteNode, parent: string | undefined) => {
    const key = parent === undefined ? matchersString(node) : `${parent}/${matchersString(node)}`;
    keys.set(node, key);
    for (const child of node.routes) walk(child, key);
  };
  walk(root, undefined);
  return keys;
}

/** model.LabelSet.String(): sorted `name="value"` pairs, `, ` between them. */
export function labelSetString(ls: LabelSet): string {
  return '{' + Object.keys(ls).sort().map((k) => `${k}=${goQuote(ls[k]!)}`).join(', ') + '}';
}
