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
import { Worker } from 'node:worker_threads';

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
      parentPort.postMessage({ id: m.id });
    } else {
      const v = validators(m.key, m.schema)[m.which];
      if (v(JSON.parse(m.text))) parentPort.postMessage({ id: m.id });
      else {
        const e = v.errors[0];
        parentPort.postMessage({ id: m.id, problem: { instancePath: e.instancePath, keyword: e.keyword, params: e.params, message: e.message } });
      }
    }
  } catch (e) {
    parentPort.postMessage({ id: m.id, error: String((e && e.message) || e) });
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

interface Pending {
  resolve: (v: { problem?: SchemaProblem; error?: string }) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

export class SchemaLane {
  private worker: Worker | undefined;
  private idle: NodeJS.Timeout | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();
  private readonly modules: { ajv: string; re2js: string };

  constructor() {
    const require = createRequire(import.meta.url);
    this.modules = { ajv: require.resolve('ajv'), re2js: require.resolve('re2js') };
  }

  /** Compile both schemas; the reason one is not a valid JSON Schema, or undefined. */
  async check(schema: { input?: unknown; output?: unknown }): Promise<string | undefined> {
    return (await this.call({ op: 'check', schema })).error;
  }

  /**
   * Check `text` (JSON) against a skill's input or output schema; `key` names this version of the
   * skill's schemas (they are compiled once per key). Answers the first problem, or `error` when the
   * schema itself does not compile.
   */
  validate(key: string, schema: { input?: unknown; output?: unknown }, which: 'input' | 'output', text: string): Promise<{ problem?: SchemaProblem; error?: string }> {
    return this.call({ op: 'validate', key, schema, which, text });
  }

  private call(message: Record<string, unknown>): Promise<{ problem?: SchemaProblem; error?: string }> {
    const w = this.ensure();
    if (this.idle) clearTimeout(this.idle);
    this.idle = undefined;
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.restart(new SchemaLaneError(`checking a skill's schema took longer than ${CALL_TIMEOUT_MS / 1000} s`)), CALL_TIMEOUT_MS);
      timer.unref();
      this.pending.set(id, { resolve, reject, timer });
      w.postMessage({ id, ...message });
    });
  }

  private ensure(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(WORKER_SOURCE, { eval: true, workerData: { ...this.modules, cached: CACHED_SKILLS } });
    w.unref();
    w.on('message', (m: { id: number; problem?: SchemaProblem; error?: string }) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      clearTimeout(p.timer);
      p.resolve({ ...(m.problem ? { problem: m.problem } : {}), ...(m.error !== undefined ? { error: m.error } : {}) });
      if (this.pending.size === 0) this.armIdle();
    });
    w.on('error', (e) => this.restart(new SchemaLaneError(`the schema thread failed: ${e.message}`)));
    w.on('exit', () => {
      if (this.worker === w) this.restart(new SchemaLaneError('the schema thread exited'));
    });
    this.worker = w;
    return w;
  }

  private armIdle(): void {
    if (this.idle) clearTimeout(this.idle);
    this.idle = setTimeout(() => {
      this.idle = undefined;
      if (this.pending.size === 0) this.stop();
    }, IDLE_MS);
    this.idle.unref();
  }

  /** End the thread and fail whatever was waiting on it. */
  private restart(e: Error): void {
    this.stop();
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(e);
    }
    this.pending.clear();
  }

  private stop(): void {
    const w = this.worker;
    this.worker = undefined;
    if (w) void w.terminate();
  }

  close(): void {
    if (this.idle) clearTimeout(this.idle);
    this.restart(new SchemaLaneError('the gateway is stopping'));
  }
}
