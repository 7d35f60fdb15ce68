import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import type { Static, TSchema } from '@sinclair/typebox';
import { badRequest } from './errors.js';
import { lazyRequire } from './lazy.js';

const ajvModule = lazyRequire<typeof import('ajv')>('ajv');
const ajvFormats = lazyRequire<{ default: (a: Ajv) => Ajv }>('ajv-formats');
let shared: Ajv | undefined;

/** The options of the shared instance (scripts/precompile-validators.mjs compiles with the same). */
export const AJV_OPTIONS = { allErrors: false, coerceTypes: false, useDefaults: false, strict: false } as const;

/** One shared Ajv instance, made on the first compile (Ajv is a heavy import). */
export function ajv(): Ajv {
  return (shared ??= ajvFormats().default(new (ajvModule().Ajv)({ ...AJV_OPTIONS })));
}

/** Every schema given to compile(), for the build to precompile. */
const schemas = new Set<TSchema>();

export function compiledSchemas(): TSchema[] {
  return [...schemas];
}

/** The name of a schema's precompiled validator: a hash of the options and the schema's JSON. */
export function schemaKey(schema: unknown): string {
  return createHash('sha256').update(JSON.stringify([AJV_OPTIONS, schema])).digest('hex').slice(0, 32);
}

/**
 * The build's precompiled validators (dist/bundle/validators/<schemaKey>.cjs, Ajv's standalone
 * code), found beside the bundle's chunks: only the bundle has them, so a source tree under test
 * never picks up validators of another build.
 */
let validatorsDir: string | null | undefined;
function precompiled(schema: TSchema): ValidateFunction | undefined {
  if (validatorsDir === undefined) {
    const here = dirname(fileURLToPath(import.meta.url));
    validatorsDir = [join(here, 'validators'), join(here, '../validators')].find((d) => existsSync(d)) ?? null;
  }
  if (validatorsDir === null) return undefined;
  const file = join(validatorsDir, `${schemaKey(schema)}.cjs`);
  return existsSync(file) ? (createRequire(file)(file) as ValidateFunction) : undefined;
}

export interface Validator<T> {
  (value: unknown): value is T;
  errors?: ErrorObject[] | null;
}

/**
 * A validator for a TypeBox (or plain JSON) schema, made on first use: the build's precompiled one
 * when there is one (no Ajv on the event loop: loading Ajv, compiling its meta-schema and the schema
 * held the loop 150-200 ms on a daemon's first POST /api/providers), else Ajv compiles it then.
 * Never at start-up: Ajv code generation would be its largest part, and most schemas are for
 * requests a given daemon may never see.
 */
export function compile<S extends TSchema>(schema: S): Validator<Static<S>> {
  schemas.add(schema);
  let compiled: ValidateFunction<Static<S>> | undefined;
  const validate = ((value: unknown) => {
    compiled ??= (precompiled(schema) as ValidateFunction<Static<S>> | undefined) ?? ajv().compile<Static<S>>(schema);
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
