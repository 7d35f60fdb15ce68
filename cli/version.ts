import { readFileSync } from 'node:fs';

/** The package version, read from package.json beside dist/. */
export function cliVersion(): string {
  for (const rel of ['../../package.json', '../package.json']) {
    try {
      return (JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { version: string }).version;
    } catch {
      /* next */
    }
  }
  return '0.0.0';
}
