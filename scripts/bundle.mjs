// Bundles the CLI and the daemon into dist/bundle/ctl.mjs (one file per lazily loaded command group),
// so `ctl` and `ctl serve` start without resolving and reading hundreds of module files. tsc still
// type-checks and emits dist/ for the tests; bin/ctl runs the bundle when it is there.
// Packages loaded on first use through createRequire (src/http/lazy.ts) stay outside the bundle, as
// does better-sqlite3 (a native addon).
import { build } from 'esbuild';

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
