/**
 * Requests from one member to another: HTTPS through the egress policy, this member's server
 * certificate as the client certificate, and the other side's certificate pinned by fingerprint
 * (the cluster certificate; self-signed, so no CA could vouch for it). The pin is checked before a
 * byte of the request is sent.
 */
import http from 'node:http';
import { isIP } from 'node:net';
import tls from 'node:tls';
import type { Egress } from '../../egress/index.js';
import type { KeyPair } from '../daemon-control.js';
import { fingerprint } from './identity.js';

export interface PeerReply {
  status: number;
  /** The LXD envelope's metadata (sync replies). */
  metadata: unknown;
  /** The envelope's error text (error replies), or the body when it was not an envelope. */
  error: string;
}

export interface PeerRequest {
  address: string;
  method: string;
  path: string;
  body?: unknown;
  /** Fingerprint the server's certificate must have. */
  pin: string;
  identity: KeyPair;
  timeoutMs?: number;
}

export class PinMismatch extends Error {}

function splitAddress(address: string): { host: string; port: number } {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(address) ?? /^([^:]+):(\d+)$/.exec(address);
  if (!m) throw new Error(`invalid member address ${JSON.stringify(address)}`);
  return { host: m[1]!, port: Number(m[2]) };
}

/**
 * Send one request. `timeoutMs` bounds the TLS handshake and each wait for a byte of the answer;
 * the whole exchange is given up after twice that whatever the other side does (a member frozen
 * mid-answer must not hold a heartbeat round or a removal up).
 */
export async function peerRequest(egress: Egress, r: PeerRequest): Promise<PeerReply> {
  const timeoutMs = r.timeoutMs ?? 5000;
  let socket: tls.TLSSocket | undefined;
  let timer: NodeJS.Timeout | undefined;
  const exchange = exchangeOnce(egress, r, timeoutMs, (s) => (socket = s));
  exchange.catch(() => undefined); // its late failure, once the deadline has answered
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      socket?.destroy();
      reject(new Error(`${r.address}: no complete answer within ${2 * timeoutMs} ms`));
    }, 2 * timeoutMs);
  });
  try {
    return await Promise.race([exchange, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

async function exchangeOnce(egress: Egress, r: PeerRequest, timeoutMs: number, onSocket: (s: tls.TLSSocket) => void): Promise<PeerReply> {
  const { host, port } = splitAddress(r.address);
  const target = await egress.resolve(host, port);
  const socket = await new Promise<tls.TLSSocket>((resolve, reject) => {
    const s = tls.connect({
      host: target.host,
      port: target.port,
      cert: r.identity.cert,
      key: r.identity.key,
      rejectUnauthorized: false,
      ...(isIP(host) === 0 ? { servername: host } : {}),
    });
    onSocket(s);
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`${r.address}: no TLS handshake within ${timeoutMs} ms`));
    }, timeoutMs);
    s.once('secureConnect', () => {
      clearTimeout(timer);
      const raw = s.getPeerCertificate().raw;
      if (!raw || fingerprint(raw) !== r.pin) {
        s.destroy();
        reject(new PinMismatch(`${r.address}: the certificate there is not the cluster's`));
        return;
      }
      resolve(s);
    });
    s.once('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`${r.address}: ${e.message}`));
    });
  });
  const payload = r.body === undefined ? undefined : Buffer.from(JSON.stringify(r.body));
  return new Promise<PeerReply>((resolve, reject) => {
    const req = http.request(
      {
        createConnection: () => socket,
        method: r.method,
        path: r.path,
        headers: {
          Host: r.address,
          ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': payload.length } : {}),
        },
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          socket.destroy();
          const text = Buffer.concat(chunks).toString('utf8');
          let env: { metadata?: unknown; error?: string } | undefined;
          try {
            env = JSON.parse(text) as typeof env;
          } catch {
            env = undefined;
          }
          resolve({ status: res.statusCode ?? 0, metadata: env?.metadata, error: env?.error ?? text });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${r.address}: no answer within ${timeoutMs} ms`)));
    req.on('error', (e) => {
      socket.destroy();
      reject(e);
    });
    req.end(payload);
  });
}
