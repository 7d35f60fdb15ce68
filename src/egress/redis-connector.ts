import { createConnection, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { AbstractConnector } from 'ioredis';
import type { Egress } from './index.js';

interface Options {
  host: string;
  port: number;
  tls: boolean;
  egress: Egress;
}

/**
 * An ioredis connector that opens every (re)connection through the egress policy: the address map
 * applies and, under test, a non-loopback Redis is refused instead of contacted. The stream is
 * returned while still connecting, as ioredis' own connector does, so its connect timeout applies.
 */
export function egressConnector(opts: Options) {
  return class EgressConnector extends AbstractConnector {
    constructor(options: unknown) {
      super((options as { disconnectTimeout?: number }).disconnectTimeout ?? 2000);
    }

    override connect(): Promise<Socket> {
      this.connecting = true;
      return opts.egress.resolve(opts.host, opts.port).then((target) => {
        if (!this.connecting) throw new Error('Connection is closed.');
        const stream = opts.tls
          ? tlsConnect({ host: target.host, port: target.port, servername: isIP(opts.host) === 0 ? opts.host : undefined })
          : createConnection({ host: target.host, port: target.port });
        stream.once('error', (err) => {
          this.firstError = err;
        });
        this.stream = stream;
        return stream;
      });
    }
  };
}
