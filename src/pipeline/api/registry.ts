/**
 * Route registration for the pipeline API: each route is declared once with its summary, body and
 * query description and response schema; the registry mounts it on the kit router (validating JSON
 * bodies with Ajv, 422 on a mismatch) and keeps the list for the OpenAPI document.
 */
import type { TSchema } from '@sinclair/typebox';
import type { ErrorObject } from 'ajv';
import type { RequestContext } from '../../http/context.js';
import { HttpError } from '../../http/errors.js';
import { readJson } from '../../http/body.js';
import { sendJson } from '../../http/respond.js';
import type { Route, Router } from '../../http/router.js';
import { compile, type Validator } from '../../http/schema.js';

export interface QueryParam {
  name: string;
  schema: Record<string, unknown>;
  description: string;
  required?: boolean;
}

export interface RouteSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  summary: string;
  tag: string;
  /** No Bearer token needed (login and health only). */
  public?: boolean;
  /** JSON body schema, validated before the handler runs. */
  body?: TSchema;
  /** Body required (default true when `body` is set). */
  bodyRequired?: boolean;
  /** A multipart/form-data body (documented; the handler parses it). */
  multipart?: { field: string; description: string };
  query?: QueryParam[];
  /** Description of path parameters (`:id` → integer unless listed here). */
  params?: Record<string, { schema: Record<string, unknown>; description: string }>;
  response?: TSchema;
  /** Success status (default 200). */
  status?: number;
  /** Error statuses this route can answer besides 401/422/500. */
  errors?: number[];
  /** Documentation of a non-JSON success body (file download). */
  produces?: string;
  handler: (ctx: RequestContext, body: any) => unknown;
}

/** A handler's answer with a status other than the route's default. */
export class Reply {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {}
}

export class ApiRegistry {
  readonly specs: RouteSpec[] = [];

  constructor(private readonly router: Router) {}

  add(spec: RouteSpec): Route {
    const validate = spec.body ? compile(spec.body) : undefined;
    const bodyRequired = spec.bodyRequired ?? spec.body !== undefined;
    const route = this.router.on(spec.method, spec.path, async (ctx) => {
      let body: unknown = undefined;
      if (validate) {
        body = await readJson(ctx);
        if (body === undefined) {
          if (bodyRequired) throw new HttpError(422, 'request body is required (a JSON object)', { code: 'validation_error' });
          body = {};
        }
        if (!validate(body)) throw validationError(validate, 'body');
      }
      const out = await spec.handler(ctx, body);
      if (out === undefined) return; // the handler answered itself
      if (out instanceof Reply) sendJson(ctx.res, out.status, out.body, out.headers);
      else sendJson(ctx.res, spec.status ?? 200, out);
    });
    if (spec.public) route.tag('public');
    this.specs.push(spec);
    return route;
  }
}

export function validationError(v: Validator<unknown>, root: string): HttpError {
  return new HttpError(422, describeValidation(v.errors, root), { code: 'validation_error', details: v.errors });
}

/** `body/status must be one of: approved, rejected` style messages. */
export function describeValidation(errors: ErrorObject[] | null | undefined, root: string): string {
  const e = errors?.[0];
  if (!e) return `${root} is invalid`;
  const where = root + (e.instancePath || '');
  switch (e.keyword) {
    case 'required':
      return `${where}/${(e.params as { missingProperty: string }).missingProperty} is required`;
    case 'additionalProperties':
      return `${where} has unknown field "${(e.params as { additionalProperty: string }).additionalProperty}"`;
    case 'enum':
      return `${where} must be one of: ${((e.params as { allowedValues: unknown[] }).allowedValues ?? []).map((x) => JSON.stringify(x)).join(', ')}`;
    case 'type':
      return `${where} must be ${(e.params as { type: string }).type}`;
    default:
      return `${where} ${e.message ?? 'is invalid'}`;
  }
}

/** Query helpers: bad values are 422 with the parameter named. */
export function queryInt(ctx: RequestContext, name: string, def: number, min: number, max: number): number {
  const raw = ctx.query.get(name);
  if (raw === null || raw === '') return def;
  if (!/^-?\d+$/.test(raw)) throw new HttpError(422, `query/${name} must be an integer`, { code: 'validation_error' });
  const n = Number(raw);
  if (n < min || n > max) throw new HttpError(422, `query/${name} must be from ${min} to ${max}`, { code: 'validation_error' });
  return n;
}

export function queryEnum<T extends string>(ctx: RequestContext, name: string, allowed: readonly T[], def?: T): T | undefined {
  const raw = ctx.query.get(name);
  if (raw === null || raw === '') return def;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new HttpError(422, `query/${name} must be one of: ${allowed.join(', ')}`, { code: 'validation_error' });
  }
  return raw as T;
}

export function queryString(ctx: RequestContext, name: string, maxLength: number): string | undefined {
  const raw = ctx.query.get(name);
  if (raw === null || raw === '') return undefined;
  if (raw.length > maxLength) throw new HttpError(422, `query/${name} must be at most ${maxLength} characters`, { code: 'validation_error' });
  return raw;
}

export function queryBool(ctx: RequestContext, name: string, def: boolean): boolean {
  const raw = ctx.query.get(name);
  if (raw === null || raw === '') return def;
  if (/^(1|true|yes)$/i.test(raw)) return true;
  if (/^(0|false|no)$/i.test(raw)) return false;
  throw new HttpError(422, `query/${name} must be true or false`, { code: 'validation_error' });
}

/** A path id: not an integer → 422; an integer no record can have → 404. */
export function pathId(ctx: RequestContext, what: string, name = 'id'): number {
  const raw = ctx.params[name] ?? '';
  if (!/^-?\d+$/.test(raw)) throw new HttpError(422, `path/${name} must be an integer`, { code: 'validation_error' });
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n <= 0) throw new HttpError(404, `${what} not found`, { code: 'not_found' });
  return n;
}
