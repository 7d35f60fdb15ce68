import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { Static, TSchema } from '@sinclair/typebox';
import { badRequest } from './errors.js';

// ajv-formats ships CommonJS; under NodeNext its default export is the namespace object.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  a: Ajv,
) => Ajv;

/** One shared Ajv instance: schemas are compiled once, at module load, never per request. */
export const ajv = addFormats(
  new Ajv({ allErrors: false, coerceTypes: false, useDefaults: false, strict: false }),
);

export interface Validator<T> {
  (value: unknown): value is T;
  errors?: ErrorObject[] | null;
}

/** Compile a TypeBox (or plain JSON) schema once. */
export function compile<S extends TSchema>(schema: S): Validator<Static<S>> {
  return ajv.compile(schema) as ValidateFunction<Static<S>> as Validator<Static<S>>;
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
