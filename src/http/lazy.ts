import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * A CommonJS package loaded on first use instead of at daemon start. Heavy libraries that only
 * some requests need (multipart, XML, WebSocket, JWT, Redis) go through this so `ctl serve`
 * becomes ready fast.
 */
export function lazyRequire<T>(id: string): () => T {
  let mod: T | undefined;
  return () => (mod ??= require(id) as T);
}
