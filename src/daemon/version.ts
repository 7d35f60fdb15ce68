import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

let cached: string | undefined;

/** The package version (package.json sits two levels above dist/src/daemon and src/daemon alike). */
export function ctlVersion(): string {
  if (cached) return cached;
  const here = dirname(fileURLToPath(import.meta.url));
  for (const up of ['../..', '../../..']) {
    try {
      cached = (JSON.parse(readFileSync(join(here, up, 'package.json'), 'utf8')) as { version: string }).version;
      return cached;
    } catch {
      /* try the next level */
    }
  }
  cached = '0.0.0';
  return cached;
}
