// Bundles the CLI and the daemon into dist/bundle/ctl.mjs (one file per lazily loaded command group),
// so `ctl` and `ctl serve` start without resolving and reading hundreds of module files. tsc still
// type-checks and emits dist/ for the tests; bin/ctl runs the bundle when it is there.
// Packages loaded on first use through createRequire (src/http/lazy.ts) stay outside the bundle, as
// does better-sqlite3 (a native addon).
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

// Chunk names carry a content hash: clear the old ones, or every rebuild leaves its chunks behind
// (and `npm pack` lists hundreds of dead files).
rmSync('dist/bundle/chunks', { recursive: true, force: true });

await build({
  entryPoints: { ctl: 'cli/main.ts' },
  outdir: 'dist/bundle',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: 'chunks/[name]-[hash]',
  // ink and react (the live `ctl node watch` table) stay in node_modules: ink pulls optional dev tooling.
  external: ['better-sqlite3', 'ink', 'react'],
  // Bundled CommonJS code calls require(); give the ES module one.
  banner: { js: "import { createRequire as __ctlCreateRequire } from 'node:module'; const require = __ctlCreateRequire(import.meta.url);" },
  sourcemap: 'linked',
  logLevel: 'warning',
});

// The worker threads' programs (their lanes find them beside the bundle): one self-contained file
// each, so a thread loads its own work only (the detectors and re2js; the tokenizer's tables), not
// the daemon's chunks.
await build({
  entryPoints: {
    'guardrail-worker': 'src/gateway/guardrails/worker.ts',
    'token-worker': 'src/gateway/translate/token-worker.ts',
  },
  outdir: 'dist/bundle',
  outExtension: { '.js': '.mjs' },
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  banner: { js: "import { createRequire as __ctlCreateRequire } from 'node:module'; const require = __ctlCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});

// V8 keeps each loaded file's source text in the heap for as long as the process runs, and stores a
// text with any character above U+00FF at two bytes per character. esbuild escapes non-ASCII in
// strings but not in comments or regular expression literals, where a few arrows and the µ of
// "µs" made the 1.6 MB daemon chunk a 3.2 MiB string in every daemon. The same \u escapes mean the
// same characters in comments, regex literals and strings; only the columns of those few lines
// shift in the source map.
// (A non-ASCII character right after a backslash stops the build: see below.)
function asciiOnly(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) asciiOnly(path);
    else if (entry.name.endsWith('.js')) {
      const text = readFileSync(path, 'utf8');
      const escaped = text.replace(/[^\x00-\x7f]/g, (c, at) => {
        // After a backslash the escape would become an escaped backslash and the letters u0...
        if (text[at - 1] === '\\') throw new Error(`${path}: a backslash before ${JSON.stringify(c)} at offset ${at}; write it as a \\u escape in the source`);
        return '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0');
      });
      if (escaped !== text) writeFileSync(path, escaped);
    }
  }
}
asciiOnly('dist/bundle');

// Every request schema as Ajv standalone code (scripts/precompile-validators.mjs; src/http/schema.ts
// loads them), so no request compiles a schema on the event loop. Its own process: it imports dist/src.
execFileSync(process.execPath, ['scripts/precompile-validators.mjs'], { stdio: 'inherit' });

// The skill runner is a separate plain-JavaScript program the daemon forks (src/gateway/skills/sandbox/
// pool.ts finds it beside the bundle); it imports isolated-vm from node_modules as it is.
copyFileSync('src/gateway/skills/sandbox/skill-runner.mjs', 'dist/bundle/skill-runner.mjs');

// The web consoles (src/http/console.ts serves them): one browser bundle per src/console/<name>/main.tsx
// (src/console/kit is their shared code), with its CSS beside it, as dist/console/<name>.js and .css.
// Everything they load is in these files: no CDN, nothing from another origin. test/console/bundle-size
// holds each to 150 KB gzipped.
const consoles = readdirSync('src/console', { withFileTypes: true })
  .filter((d) => d.isDirectory() && d.name !== 'kit' && existsSync(join('src/console', d.name, 'main.tsx')))
  .map((d) => d.name);
rmSync('dist/console', { recursive: true, force: true });
if (consoles.length > 0) {
  await build({
    entryPoints: Object.fromEntries(consoles.map((name) => [name, join('src/console', name, 'main.tsx')])),
    outdir: 'dist/console',
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome110', 'firefox110', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    tsconfig: 'tsconfig.console.json',
    legalComments: 'none',
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'warning',
  });
}
