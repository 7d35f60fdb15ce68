/**
 * Skills' JSON Schemas are compiled and applied on one worker thread, never on the event loop:
 * Ajv's compile is CPU-heavy by nature (schema.ts bounds how heavy), and a compiled validator cannot
 * leave the thread that made it, so validation of inputs and outputs runs there too. The thread keeps
 * the validators of recently used skills; it starts on first use and ends after IDLE_MS without work.
 * A call that takes longer than CALL_TIMEOUT_MS ends the thread (every pending call fails with
 * SchemaLaneError) and the next call starts a new one.
 *
 * `pattern`s run on re2js (linear time), so a schema cannot bring a backtracking regular expression.
 */
import { createRequire } from 'node:module';
import { WorkerLane } from '../../http/worker-lane.js';

const IDLE_MS = 30_000;
const CALL_TIMEOUT_MS = 10_000;
const CACHED_SKILLS = 256;

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { Ajv } = require(workerData.ajv);
const { RE2JS } = require(workerData.re2js);
// Ajv shares compiled patterns across every schema of an instance, keyed by the object's toString():
// it must name the pattern, or every schema would test the first pattern ever compiled.
const re2 = (pattern, flags) => {
  const re = RE2JS.compile(pattern, flags.includes('i') ? RE2JS.CASE_INSENSITIVE : 0);
  return { test: (s) => re.matcher(s).find(), toString: () => 're2:' + flags + ':' + pattern };
};
const ajv = new Ajv({ allErrors: false, strict: false, coerceTypes: false, useDefaults: false, addUsedSchema: false, code: { regExp: re2 } });
const cache = new Map();
function one(s, which) {
  if (s === undefined) return ajv.compile({});
  if (s === null || typeof s !== 'object' || Array.isArray(s)) throw new Error('schema.' + which + ' must be a JSON Schema object');
  try {
    return ajv.compile(s);
  } catch (e) {
    throw new Error('schema.' + which + ' is not a valid JSON Schema: ' + e.message);
  }
}
const pair = (schema) => ({ input: one(schema.input, 'input'), output: one(schema.output, 'output') });
function validators(key, schema) {
  let v = cache.get(key);
  if (v) {
    cache.delete(key);
  } else {
    v = pair(schema);
    if (cache.size >= workerData.cached) cache.delete(cache.keys().next().value);
  }
  cache.set(key, v);
  return v;
}
parentPort.on('message', (m) => {
  try {
    if (m.op === 'check') {
      pair(m.schema);
      parentPort.postMessage({ id: m.id, result: {} });
    } else {
      const v = validators(m.key, m.schema)[m.which];
      if (v(JSON.parse(m.text))) parentPort.postMessage({ id: m.id, result: {} });
      else {
        const e = v.errors[0];
        parentPort.postMessage({ id: m.id, result: { problem: { instancePath: e.instancePath, keyword: e.keyword, params: e.params, message: e.message } } });
      }
    }
  } catch (e) {
    parentPort.postMessage({ id: m.id, result: { error: String((e && e.message) || e) } });
  }
});`;

/** The first validation error, as Ajv reports it (for describeErrors). */
export interface SchemaProblem {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

/** The schema lane could not answer (its thread died or overran its time); the schema is not at fault. */
export class SchemaLaneError extends Error {}

export class SchemaLane {
  private readonly lane: WorkerLane<Record<string, unknown>, { problem?: SchemaProblem; error?: string }>;

  constructor() {
    const require = createRequire(import.meta.url);
    const modules = { ajv: require.resolve('ajv'), re2js: require.resolve('re2js') };
    this.lane = new WorkerLane({
      name: 'schema',
      program: () => ({ source: WORKER_SOURCE, workerData: { ...modules, cached: CACHED_SKILLS } }),
      idleMs: IDLE_MS,
      callTimeoutMs: CALL_TIMEOUT_MS,
      timeoutMessage: `checking a skill's schema took longer than ${CALL_TIMEOUT_MS / 1000} s`,
      failure: (message) => new SchemaLaneError(message),
    });
  }

  /** Compile both schemas; the reason one is not a valid JSON Schema, or undefined. */
  async check(schema: { input?: unknown; output?: unknown }): Promise<string | undefined> {
    return (await this.lane.run({ op: 'check', schema })).error;
  }

  /**
   * Check `text` (JSON) against a skill's input or output schema; `key` names this version of the
   * skill's schemas (they are compiled once per key). Answers the first problem, or `error` when the
   * schema itself does not compile.
   */
  validate(key: string, schema: { input?: unknown; output?: unknown }, which: 'input' | 'output', text: string): Promise<{ problem?: SchemaProblem; error?: string }> {
    return this.lane.run({ op: 'validate', key, schema, which, text });
  }

  close(): void {
    this.lane.close('the gateway is stopping');
  }
}
