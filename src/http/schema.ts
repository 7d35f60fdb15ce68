import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import type { Static, TSchema } from '@sinclair/typebox';
import { badRequest } from './errors.js';
import { lazyRequire } from './lazy.js';

const ajvModule = lazyRequire<typeof import('ajv')>('ajv');
const ajvFormats = lazyRequire<{ default: (a: Ajv) => Ajv }>('ajv-formats');
let shared: Ajv | undefined;

/** One shared Ajv instance, made on the first compile (Ajv is a heavy import). */
export function ajv(): Ajv {
  return (shared ??= ajvFormats().default(new (ajvModule().Ajv)({ allErrors: false, coerceTypes: false, useDefaults: false, strict: false })));
}

export interface Validator<T> {
  (value: unknown): value is T;
  errors?: ErrorObject[] | null;
}

/**
 * Compile a TypeBox (or plain JSON) schema once, on first use: Ajv code generation is the largest
 * part of start-up otherwise, and most schemas are for requests a given daemon may never see.
 */
export function compile<S extends TSchema>(schema: S): Validator<Static<S>> {
  let compiled: ValidateFunction<Static<S>> | undefined;
  const validate = ((value: unknown) => {
    compiled ??= ajv().compile<Static<S>>(schema);
    const ok = compiled(value);
    validate.errors = compiled.errors;
    return ok;
  }) as Validator<Static<S>>;
  return validate;
}

/** Readable one-line text for the first validation error, e.g. `body/name must be string`. */
export function describeErrors(errors: ErrorObject[] | null | undefined, root = 'body'): string {
  const e = errors?.[0];
  if (!e) return `${root} is invalid`;
  const where = root + (e.instancePath || '');
  if (e.keyword === 'required') return `${where}/${(e.params as { missingProperty: string }).missingProperty} is required`;
  if (e.keyword === 'additionalProperties') {
    return `${where} has unknown property ${(e.params as { additionalProperty: string }).additionalProperty}`;
  }
  return `${where} ${e.message ?? 'is invalid'}`;
}

/** Validate or throw a 400 HttpError whose message names the first problem. */
export function assertValid<T>(validate: Validator<T>, value: unknown, root = 'body'): T {
  if (!validate(value)) throw badRequest(describeErrors(validate.errors, root), { details: validate.errors });
  return value;
}
