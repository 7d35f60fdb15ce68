/**
 * A plugin package: a directory (or a .tgz / .tar.gz of one) with `plugin.json` — `{name, version,
 * description?, main? (index.js), hooks: ["request" | "response"], config?: JSON schema, defaults?}` —
 * and its main file, plain JavaScript that declares `function onRequest(request, config)` and/or
 * `function onResponse(response, config)`. Read whole and bounded (1 MiB of code); archive entries
 * outside the package, links and devices are refused.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join, normalize } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { extract } from 'tar-stream';
import { ajv } from '../../http/schema.js';
import { GatewayError } from '../errors.js';

export type Hook = 'request' | 'response';

export interface PluginManifest {
  name: string;
  version: string;
  description?: string;
  main: string;
  hooks: Hook[];
  config?: Record<string, unknown>;
  defaults?: Record<string, unknown>;
}

export interface PluginPackage {
  manifest: PluginManifest;
  code: string;
}

const MAX_CODE = 1024 * 1024;
const MAX_ARCHIVE = 8 * 1024 * 1024;
const NAME = /^[a-z0-9][a-z0-9-]{0,63}$/;

export function checkManifest(raw: unknown): PluginManifest {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new GatewayError('invalid', 'plugin.json must be a JSON object');
  const m = raw as Record<string, unknown>;
  if (typeof m.name !== 'string' || !NAME.test(m.name)) throw new GatewayError('invalid', 'plugin.json: name must be lower-case letters, digits and dashes (at most 64)');
  if (typeof m.version !== 'string' || !/^\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?$/.test(m.version)) throw new GatewayError('invalid', 'plugin.json: version must be semantic (1.2.3)');
  if (!Array.isArray(m.hooks) || m.hooks.length === 0 || !m.hooks.every((h) => h === 'request' || h === 'response')) throw new GatewayError('invalid', 'plugin.json: hooks must list "request" and/or "response"');
  const main = m.main ?? 'index.js';
  if (typeof main !== 'string' || main.includes('/') || main.includes('\\') || !main.endsWith('.js')) throw new GatewayError('invalid', 'plugin.json: main must be a .js file at the top of the package');
  if (m.config !== undefined) {
    if (typeof m.config !== 'object' || m.config === null) throw new GatewayError('invalid', 'plugin.json: config must be a JSON schema');
    try {
      ajv().compile(m.config);
    } catch (e) {
      throw new GatewayError('invalid', `plugin.json: config schema does not compile: ${(e as Error).message}`);
    }
  }
  return {
    name: m.name,
    version: m.version,
    ...(typeof m.description === 'string' ? { description: m.description.slice(0, 500) } : {}),
    main,
    hooks: [...new Set(m.hooks as Hook[])],
    ...(m.config ? { config: m.config as Record<string, unknown> } : {}),
    ...(m.defaults && typeof m.defaults === 'object' ? { defaults: m.defaults as Record<string, unknown> } : {}),
  };
}

function fromFiles(files: Map<string, Buffer>, where: string): PluginPackage {
  const manifestText = files.get('plugin.json');
  if (!manifestText) throw new GatewayError('invalid', `${where}: no plugin.json`);
  let raw: unknown;
  try {
    raw = JSON.parse(manifestText.toString('utf8'));
  } catch {
    throw new GatewayError('invalid', `${where}: plugin.json is not JSON`);
  }
  const manifest = checkManifest(raw);
  const code = files.get(manifest.main);
  if (!code) throw new GatewayError('invalid', `${where}: ${manifest.main} (plugin.json main) is missing`);
  if (code.length > MAX_CODE) throw new GatewayError('invalid', `${where}: ${manifest.main} is larger than 1 MiB`);
  return { manifest, code: code.toString('utf8') };
}

/** plugin.json is at most this long. */
const MAX_MANIFEST = 64 * 1024;

/** `main` of a manifest's text, or undefined when it is not JSON or has none. */
function mainOf(text: Buffer): string | undefined {
  try {
    const m = JSON.parse(text.toString('utf8')) as unknown;
    return m && typeof m === 'object' && typeof (m as { main?: unknown }).main === 'string' ? (m as { main: string }).main : undefined;
  } catch {
    return undefined;
  }
}

/** A regular file of the package directory, at most `max` bytes, or undefined when absent; anything else is a 400. */
function readBounded(dir: string, name: string, max: number): Buffer | undefined {
  const file = join(dir, name);
  if (!existsSync(file)) return undefined;
  try {
    const st = statSync(file);
    if (!st.isFile()) throw new GatewayError('invalid', `${dir}: ${name} is not a regular file`);
    if (st.size > max) throw new GatewayError('invalid', `${dir}: ${name} is larger than ${max >= 1024 * 1024 ? `${max / 1024 / 1024} MiB` : `${max / 1024} KiB`}`);
    return readFileSync(file);
  } catch (e) {
    if (e instanceof GatewayError) throw e;
    throw new GatewayError('invalid', `${dir}: cannot read ${name} (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

/** Read a package from a directory, or a .tgz / .tar.gz archive of one (its files at the top, or in one folder). */
export async function readPackage(path: string): Promise<PluginPackage> {
  if (!existsSync(path)) throw new GatewayError('invalid', `${path} does not exist`);
  const st = statSync(path);
  if (st.isDirectory()) {
    const files = new Map<string, Buffer>();
    const manifest = readBounded(path, 'plugin.json', MAX_MANIFEST);
    if (manifest) files.set('plugin.json', manifest);
    // Which file to read next: plugin.json's main when it parses (fromFiles reports a broken one).
    const main = manifest ? (mainOf(manifest) ?? 'index.js') : 'index.js';
    if (!main.includes('/') && !main.includes('\\')) {
      const code = readBounded(path, main, MAX_CODE);
      if (code) files.set(main, code);
    }
    return fromFiles(files, path);
  }
  if (!/\.(tgz|tar\.gz)$/.test(path)) throw new GatewayError('invalid', `${path}: a plugin is a directory or a .tgz / .tar.gz archive`);
  if (st.size > MAX_ARCHIVE) throw new GatewayError('invalid', `${path} is larger than 8 MiB`);
  let tar: Buffer;
  try {
    tar = gunzipSync(readFileSync(path), { maxOutputLength: 4 * MAX_ARCHIVE });
  } catch (e) {
    throw new GatewayError('invalid', `${path}: not a gzip archive (${(e as Error).message})`);
  }
  const files = new Map<string, Buffer>();
  await new Promise<void>((resolve, reject) => {
    const x = extract();
    x.on('entry', (h, stream, next) => {
      const name = normalize(h.name).replace(/^(\.\/)+/, '');
      const chunks: Buffer[] = [];
      stream.on('data', (c: unknown) => void chunks.push(c as Buffer));
      stream.on('end', () => {
        if (h.type === 'file' && !name.startsWith('..') && !name.startsWith('/')) {
          // `package/plugin.json` (npm pack) or `plugin.json`: keep the last path part of top-level files.
          const parts = name.split('/');
          if (parts.length <= 2) files.set(basename(name), Buffer.concat(chunks));
        } else if (h.type !== 'directory' && h.type !== 'file') {
          x.destroy(new Error(`${h.name}: ${h.type} entries are not allowed in a plugin`));
          return;
        }
        next();
      });
      stream.resume();
    });
    x.on('finish', resolve);
    x.on('error', reject);
    x.end(tar);
  }).catch((e: Error) => {
    throw new GatewayError('invalid', `${path}: ${e.message}`);
  });
  return fromFiles(files, path);
}
