/**
 * Preloaded (`node --import`) into the `@portkey-ai/gateway` process the bench starts: Portkey's
 * start-server listens on every interface and has no host option, so a listen() without a host is
 * pinned to 127.0.0.1 (the bench stays on loopback).
 */
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function patchedListen(this: net.Server, ...args: unknown[]) {
  if (typeof args[0] === 'number' && (args[1] === undefined || typeof args[1] === 'function')) {
    if (args[1] === undefined) args[1] = '127.0.0.1';
    else args.splice(1, 0, '127.0.0.1');
  } else if (args[0] !== null && typeof args[0] === 'object') {
    const o = args[0] as net.ListenOptions;
    if (o.path === undefined && !o.host) args[0] = { ...o, host: '127.0.0.1' };
  }
  return (listen as (...a: unknown[]) => net.Server).apply(this, args);
} as typeof listen;
