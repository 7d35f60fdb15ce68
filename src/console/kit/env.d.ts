// esbuild bundles imported CSS into dist/console/<name>.css.
declare module '*.css';
