/**
 * DESIGN's import rules, checked on the source: no component imports another component's files or
 * src/daemon, and the kit imports no component. Contracts between components (the gateway's chat
 * handle for the pipeline) live in the kit.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { ROOT } from '../helpers/daemon.js';

const COMPONENTS = ['core', 'alertmanager', 'gateway', 'pipeline', 'nodes'];
const KIT = ['http', 'store', 'egress', 'ratelimit'];
const SRC = join(ROOT, 'src');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** The top folder under src/ each relative import of `file` lands in. */
function importedAreas(file: string): { spec: string; area: string }[] {
  const text = readFileSync(file, 'utf8');
  const out: { spec: string; area: string }[] = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g)) {
    const spec = (m[1] ?? m[2])!;
    const rel = relative(SRC, resolve(dirname(file), spec));
    if (!rel.startsWith('..')) out.push({ spec, area: rel.split('/')[0]! });
  }
  return out;
}

describe('import rules', () => {
  it('no component imports another component or the daemon', () => {
    const bad: string[] = [];
    for (const c of COMPONENTS) {
      for (const f of files(join(SRC, c))) {
        for (const { spec, area } of importedAreas(f)) if (area !== c && (COMPONENTS.includes(area) || area === 'daemon')) bad.push(`${relative(ROOT, f)} imports ${spec}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('the kit imports no component', () => {
    const bad: string[] = [];
    for (const k of KIT) {
      for (const f of files(join(SRC, k))) {
        for (const { spec, area } of importedAreas(f)) if (COMPONENTS.includes(area) || area === 'daemon') bad.push(`${relative(ROOT, f)} imports ${spec}`);
      }
    }
    expect(bad).toEqual([]);
  });
});
