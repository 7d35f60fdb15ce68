/** The OpenAPI 3.1 document, built from the registered routes (one source of truth). */
import type { RouteSpec } from './registry.js';
import { ErrorBody } from './schemas.js';

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted (the run continues; poll its status)',
  204: 'No Content',
  400: 'Bad request',
  401: 'Missing or invalid bearer token',
  404: 'Not found',
  409: 'Conflict with the current state',
  413: 'Payload too large',
  415: 'Unsupported media type',
  422: 'Validation error',
  429: 'Too many requests (rate limited)',
  500: 'Internal server error',
  502: 'The model gateway or the social platform failed',
  503: 'A needed component or setting is missing',
};

/** JSON.parse(JSON.stringify()) drops TypeBox's symbol keys and copies. */
const plain = (s: unknown) => JSON.parse(JSON.stringify(s)) as Record<string, unknown>;

export function buildOpenApi(specs: RouteSpec[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const spec of specs) {
    const path = spec.path.replace(/:([A-Za-z_]\w*)/g, '{$1}');
    const params: unknown[] = [];
    for (const [, name] of spec.path.matchAll(/:([A-Za-z_]\w*)/g)) {
      const p = spec.params?.[name!];
      params.push({ name, in: 'path', required: true, schema: p?.schema ?? { type: 'integer', minimum: 1 }, description: p?.description ?? `${name}` });
    }
    for (const q of spec.query ?? []) params.push({ name: q.name, in: 'query', required: q.required ?? false, schema: q.schema, description: q.description });

    const responses: Record<string, unknown> = {};
    const ok = spec.status ?? 200;
    if (ok === 204) responses['204'] = { description: STATUS_TEXT[204] };
    else if (spec.produces) responses[String(ok)] = { description: STATUS_TEXT[ok], content: { [spec.produces]: { schema: { type: 'string', format: 'binary' } } } };
    else responses[String(ok)] = { description: STATUS_TEXT[ok] ?? 'OK', content: { 'application/json': { schema: spec.response ? plain(spec.response) : {} } } };
    const errors = new Set<number>([...(spec.public ? [] : [401]), ...(spec.body || spec.query || spec.params || /:/.test(spec.path) ? [422] : []), ...(spec.errors ?? [])]);
    if (/:id\b/.test(spec.path)) errors.add(404);
    if (spec.body) errors.add(400).add(415);
    for (const code of [...errors].sort()) {
      responses[String(code)] = { description: STATUS_TEXT[code] ?? 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    }

    const op: Record<string, unknown> = {
      operationId: operationId(spec),
      summary: spec.summary,
      tags: [spec.tag],
      responses,
    };
    if (params.length) op.parameters = params;
    if (spec.body) {
      op.requestBody = { required: spec.bodyRequired ?? true, content: { 'application/json': { schema: plain(spec.body) } } };
    } else if (spec.multipart) {
      op.requestBody = {
        required: true,
        content: {
          'multipart/form-data': {
            schema: { type: 'object', required: [spec.multipart.field], properties: { [spec.multipart.field]: { type: 'string', format: 'binary', description: spec.multipart.description } } },
          },
        },
      };
    }
    op.security = spec.public ? [] : [{ bearer: [] }];
    (paths[path] ??= {})[spec.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'ctl content pipeline API',
      version,
      description:
        'Research → draft → review → publish → measure. Every operation except login and health needs `Authorization: Bearer <token>` on TCP listeners (the control socket is trusted). Errors are `{"detail": "..."}`.',
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas: { Error: plain(ErrorBody) },
    },
  };
}

function operationId(spec: RouteSpec): string {
  const words = spec.path
    .replace(/^\/api\//, '')
    .split('/')
    .map((w) => (w.startsWith(':') ? `by_${w.slice(1)}` : w.replace(/[^A-Za-z0-9]+/g, '_')));
  return `${spec.method.toLowerCase()}_${words.join('_')}`;
}
