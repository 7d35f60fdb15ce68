/**
 * Bounds on skills' input and output JSON Schemas. Ajv turns a schema into code, and that costs time
 * far out of proportion to its size (2,000 `anyOf` branches: about 20 s), so a schema is measured
 * here before it is compiled (on the schema lane, off the event loop: schema-lane.ts).
 */

export const SCHEMA_LIMITS = {
  /** The schema as JSON text. */
  bytes: 64 * 1024,
  /** Objects and arrays in it, at any depth (a tool's parameters rarely need 100). */
  nodes: 500,
  /** Nesting of objects and arrays. */
  depth: 32,
} as const;

/** What makes a schema too big to compile, or undefined when it is within SCHEMA_LIMITS. */
export function schemaOverLimits(schema: unknown, where: string): string | undefined {
  if (schema === null || typeof schema !== 'object') return undefined;
  let nodes = 0;
  const stack: [unknown, number][] = [[schema, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (++nodes > SCHEMA_LIMITS.nodes) return `${where} has more than ${SCHEMA_LIMITS.nodes} objects and arrays (subschemas, branches, lists): split the skill or simplify its schema`;
    if (depth > SCHEMA_LIMITS.depth) return `${where} is nested deeper than ${SCHEMA_LIMITS.depth} levels`;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  const bytes = Buffer.byteLength(JSON.stringify(schema));
  if (bytes > SCHEMA_LIMITS.bytes) return `${where} is larger than ${SCHEMA_LIMITS.bytes / 1024} KiB as JSON`;
  return undefined;
}
