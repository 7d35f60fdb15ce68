import type { ConfigKeys } from '../http/component.js';

/**
 * Every key of a ctl.yaml document must be one the daemon or a component reads: a misspelt key
 * (`log-levle`, `alertmanger:`, `egress: {alow: …}`) would otherwise be a silent no-op.
 */

/** The settings of one `servers.<name>` mapping. */
const SERVER_KEYS: ConfigKeys = {
  address: true,
  'dedicated-certificate': true,
  'serve-unix': true,
  'drain-connections-timeout': true,
  'web-config-file': true,
  'header-timeout': true,
  'body-timeout': true,
  'idle-timeout': true,
  'max-connections': true,
  'max-connections-per-ip': true,
};

/** The whole document: the daemon's own keys, then one section (and one server, one alert switch) per component. */
export function ctlYamlKeys(components: readonly { name: string; configKeys: ConfigKeys }[]): ConfigKeys {
  const names = (value: true | ConfigKeys) => Object.fromEntries(components.map((c) => [c.name, value]));
  return {
    'pre-init-listen-address': true,
    'init-failure-domain': true,
    'log-level': true,
    'max-buffered-body-bytes': true,
    servers: names(SERVER_KEYS),
    egress: { 'address-map': { '*': true }, 'loopback-only': true, allow: true },
    storage: { postgres: true, redis: true, postgres_env: true, redis_env: true },
    alerts: names(true),
    ...Object.fromEntries(components.map((c) => [c.name, c.configKeys])),
  };
}

/**
 * The first key of `doc` not in `keys`, as a message naming its path (and the key it was probably
 * meant to be); undefined when every key is known.
 */
export function unknownKey(doc: unknown, keys: ConfigKeys, path = ''): string | undefined {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return undefined;
  for (const [k, v] of Object.entries(doc as Record<string, unknown>)) {
    const known = keys[k] ?? keys['*'];
    const at = path ? `${path}.${k}` : k;
    if (known === undefined) {
      const near = closest(k, Object.keys(keys).filter((c) => c !== '*'));
      const choices = Object.keys(keys).filter((c) => c !== '*');
      return `unknown key ${JSON.stringify(at)}${near ? ` (did you mean ${JSON.stringify(path ? `${path}.${near}` : near)}?)` : ''}; known here: ${choices.join(', ')}`;
    }
    if (known !== true) {
      const inner = unknownKey(v, known, at);
      if (inner) return inner;
    }
  }
  return undefined;
}

/** The candidate within a small edit distance of `word` (a typo), if one is. */
function closest(word: string, candidates: string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(word.length / 3)) + 1;
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

/** Levenshtein distance, with a swap of two neighbours counted as one edit. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = d;
    }
  }
  return rows[a.length]![b.length]!;
}
