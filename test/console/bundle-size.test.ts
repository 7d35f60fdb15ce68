/**
 * Each web console's bundle (scripts/bundle.mjs: dist/console/<name>.js and .css, built from
 * src/console/<name>/main.tsx) stays at most 150 KB gzipped, and every console has one.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/daemon.js';

const LIMIT = 150 * 1000;
const consoles = readdirSync(join(ROOT, 'src/console'), { withFileTypes: true })
  .filter((d) => d.isDirectory() && d.name !== 'kit')
  .map((d) => d.name);

describe('console bundles', () => {
  it('finds the consoles', () => {
    expect(consoles).toContain('alertmanager');
  });

  for (const name of consoles) {
    it(`${name}: built, at most 150 KB gzipped (js + css)`, () => {
      const js = join(ROOT, 'dist/console', `${name}.js`);
      expect(existsSync(js), `${js} is missing: npm run build`).toBe(true);
      let total = gzipSync(readFileSync(js), { level: 9 }).length;
      const css = join(ROOT, 'dist/console', `${name}.css`);
      if (existsSync(css)) total += gzipSync(readFileSync(css), { level: 9 }).length;
      expect(total).toBeLessThanOrEqual(LIMIT);
    });
  }
});
