// Precompiles every request schema of the daemon into Ajv standalone code, one CommonJS module per
// schema in dist/bundle/validators/<schemaKey>.cjs (src/http/schema.ts loads them on first use), so
// no request compiles a schema on the event loop: Ajv's load, its meta-schema and a schema's code
// generation held it 150-200 ms on the first POST /api/providers of a daemon.
// Runs after tsc (it imports dist/src, where every module that compiles a schema registers it) and
// in its own process (scripts/bundle.mjs starts it): those modules are loaded, never started.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);
const OUT = 'dist/bundle/validators';

function modules(dir) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...modules(path));
    else if (entry.name.endsWith('.js') && /http\/schema\.js['"]/.test(readFileSync(path, 'utf8'))) found.push(path);
  }
  return found;
}

for (const file of modules('dist/src')) await import(pathToFileURL(resolve(file)).href);
const { AJV_OPTIONS, compiledSchemas, schemaKey } = await import(pathToFileURL(resolve('dist/src/http/schema.js')).href);
const { Ajv } = require('ajv');
const standaloneCode = require('ajv/dist/standalone').default;
const addFormats = require('ajv-formats').default;

rmSync(OUT, { recursive: true, force: true });
mkdirSync(OUT, { recursive: true });
// One instance for all, as at run time (a schema's $id is known to the ones compiled after it).
const ajv = addFormats(new Ajv({ ...AJV_OPTIONS, code: { source: true } }));
let count = 0;
for (const schema of compiledSchemas()) {
  const key = schemaKey(schema);
  writeFileSync(join(OUT, `${key}.cjs`), standaloneCode(ajv, ajv.compile(schema)));
  count++;
}
console.log(`precompiled ${count} request schemas into ${OUT}`);
process.exit(0);
