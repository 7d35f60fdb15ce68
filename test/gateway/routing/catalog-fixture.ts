/** The catalog the routing unit tests resolve against: three providers, an alias, a combo and a mapping. */
import { Catalog } from '../../../src/gateway/catalog.js';
import { parseConfigText } from '../../../src/gateway/config-file.js';
import { GatewayStore } from '../../../src/gateway/store.js';
import { GATEWAY_MIGRATIONS } from '../../../src/gateway/schema.js';
import { openStore } from '../../../src/store/index.js';

export const YAML = `
providers:
  - {id: a, kind: openai, base_url: "http://127.0.0.1:1/v1", models: [m1, m2, shared, "org/model-x"]}
  - {id: b, kind: openai, base_url: "http://127.0.0.1:2/v1", models: [m1, shared], priority: -1}
  - {id: off, kind: openai, base_url: "http://127.0.0.1:3/v1", enabled: false, models: [m9]}
aliases: {fast: a/m1, best: combo1}
combos:
  - {name: combo1, strategy: priority, targets: [a/m1, fast, {model: b/m1, weight: 3}, nope/x]}
mappings:
  - {pattern: "gpt-4*", combo: combo1}
pricing:
  a/m1: {input: 5, output: 10}
  b/m1: {input: 1, output: 1}
`;

export function catalog(text = YAML): Catalog {
  const db = new GatewayStore(openStore(':memory:', GATEWAY_MIGRATIONS));
  return new Catalog(db, parseConfigText(text, {}, 0));
}
