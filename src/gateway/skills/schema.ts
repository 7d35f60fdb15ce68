/**
 * Skills' input and output JSON Schemas, compiled by their own Ajv instance whose `pattern` uses
 * re2js (linear time), so a manifest cannot bring a regular expression that stalls the daemon.
 */
import type { Ajv, ValidateFunction } from 'ajv';
import { RE2JS } from 're2js';
import { lazyRequire } from '../../http/lazy.js';
import { describeErrors } from '../../http/schema.js';

const ajvModule = lazyRequire<typeof import('ajv')>('ajv');
let shared: Ajv | undefined;

function re2(pattern: string, flags: string): { test: (s: string) => boolean } {
  const re = RE2JS.compile(pattern, flags.includes('i') ? RE2JS.CASE_INSENSITIVE : 0);
  return { test: (s: string) => re.matcher(s).find() };
}

function ajv(): Ajv {
  return (shared ??= new (ajvModule().Ajv)({ allErrors: false, strict: false, coerceTypes: false, useDefaults: false, addUsedSchema: false, code: { regExp: re2 as never } }));
}

export interface SkillValidators {
  input: ValidateFunction;
  output: ValidateFunction;
}

/** Compile both schemas; throws with a readable message when one is not a valid JSON Schema. */
export function compileSkillSchemas(schema: { input?: unknown; output?: unknown }): SkillValidators {
  const one = (s: unknown, which: string): ValidateFunction => {
    if (s === undefined) return ajv().compile({});
    if (s === null || typeof s !== 'object' || Array.isArray(s)) throw new Error(`schema.${which} must be a JSON Schema object`);
    try {
      return ajv().compile(s as object);
    } catch (e) {
      throw new Error(`schema.${which} is not a valid JSON Schema: ${(e as Error).message}`);
    }
  };
  return { input: one(schema.input, 'input'), output: one(schema.output, 'output') };
}

/** The first problem of a value against a compiled schema, or undefined when it passes. */
export function problemOf(v: ValidateFunction, value: unknown, root: string): string | undefined {
  return v(value) ? undefined : describeErrors(v.errors, root);
}
