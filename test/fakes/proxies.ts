/**
 * Loopback forward proxies for tests: an HTTP CONNECT proxy and a SOCKS5 proxy (RFC 1928, with the
 * RFC 1929 username/password method), each counting the tunnels it opened and refusing any destination
 * outside loopback.
 */
import { createServer as createHttpServer, type IncomingMessage } from 'node:http';
import { createServer as createTcpServer, connect, isIP, type AddressInfo, type Server, type Socket } from 'node:net';

export interface FakeProxy {
  url: string;
  port: number;
  /** `host:port` of every tunnel opened, in order. */
  tunnels: string[];
  /** HTTP requests seen inside plain-HTTP tunnels (request lines at the start of a chunk). */
  requests: number;
  /** Requests refused for bad or missing credentials. */
  refusedAuth: number;
  close(): Promise<void>;
}

const loopbackDestination = (host: string) => host === 'localhost' || host.startsWith('127.') || host === '::1';

const REQUEST_LINE = /^(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) \S+ HTTP\/1\.[01]\r\n/;

function tunnel(state: FakeProxy, client: Socket, host: string, port: number, ready: () => void, failed: () => void): void {
  if (!loopbackDestination(host)) return failed();
  const upstream = connect(port, host, () => {
    ready();
    client.on('data', (d: Buffer) => {
      if (REQUEST_LINE.test(d.subarray(0, 64).toString('latin1'))) state.requests++;
    });
    upstream.pipe(client);
    client.pipe(upstream);
  });
  upstream.on('error', () => client.destroy());
  client.on('error', () => upstream.destroy());
}

function closer(server: Server, sockets: Set<Socket>): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
}

/** An HTTP proxy answering CONNECT; with `auth` ("user:pass") it requires Basic Proxy-Authorization. */
export async function startConnectProxy(auth?: string): Promise<FakeProxy> {
  const sockets = new Set<Socket>();
  const server = createHttpServer((_req, res) => res.writeHead(405).end());
  const state: FakeProxy = { url: '', port: 0, tunnels: [], requests: 0, refusedAuth: 0, close: closer(server, sockets) };
  server.on('connection', (s: Socket) => (sockets.add(s), s.on('close', () => sockets.delete(s))));
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    sockets.add(client);
    if (auth && req.headers['proxy-authorization'] !== `Basic ${Buffer.from(auth).toString('base64')}`) {
      state.refusedAuth++;
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const target = String(req.url);
    const i = target.lastIndexOf(':');
    const host = target.slice(0, i).replace(/^\[(.*)\]$/, '$1');
    state.tunnels.push(target);
    tunnel(
      state,
      client,
      host,
      Number(target.slice(i + 1)),
      () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length) client.unshift(head);
      },
      () => client.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n'),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.port = (server.address() as AddressInfo).port;
  state.url = `http://${auth ? `${auth}@` : ''}127.0.0.1:${state.port}`;
  return state;
}

/** Read exactly n bytes from a socket (the SOCKS handshake is a few small fixed messages). */
function reader(s: Socket): (n: number) => Promise<Buffer> {
  let buf = Buffer.alloc(0);
  let want: { n: number; resolve: (b: Buffer) => void; reject: (e: Error) => void } | undefined;
  const pump = () => {
    if (want && buf.length >= want.n) {
      const out = buf.subarray(0, want.n);
      buf = buf.subarray(want.n);
      const w = want;
      want = undefined;
      w.resolve(out);
    }
  };
  const onData = (d: Buffer) => {
    buf = Buffer.concat([buf, d]);
    pump();
  };
  s.on('data', onData);
  s.on('close', () => want?.reject(new Error('closed')));
  return (n) => {
    if (n === 0) {
      // Done reading: hand what is left back to the stream for the tunnel.
      s.off('data', onData);
      s.pause();
      if (buf.length) s.unshift(buf);
      return Promise.resolve(Buffer.alloc(0));
    }
    return new Promise<Buffer>((resolve, reject) => {
      want = { n, resolve, reject };
      pump();
    });
  };
}

/** A SOCKS5 proxy; with `auth` ("user:pass") it requires the username/password method. */
export async function startSocks5Proxy(auth?: string): Promise<FakeProxy> {
  const sockets = new Set<Socket>();
  const state: FakeProxy = { url: '', port: 0, tunnels: [], requests: 0, refusedAuth: 0, close: async () => undefined };
  const server = createTcpServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    const read = reader(client);
    void (async () => {
      const [ver, n] = await read(2);
      if (ver !== 5) return client.destroy();
      const methods = [...(await read(n!))];
      const method = auth ? 2 : 0;
      if (!methods.includes(method)) return client.end(Buffer.from([5, 0xff]));
      client.write(Buffer.from([5, method]));
      if (auth) {
        const [, ulen] = await read(2);
        const user = (await read(ulen!)).toString();
        const [plen] = await read(1);
        const pass = (await read(plen!)).toString();
        if (`${user}:${pass}` !== auth) {
          state.refusedAuth++;
          return client.end(Buffer.from([1, 1]));
        }
        client.write(Buffer.from([1, 0]));
      }
      const [, cmd, , atyp] = await read(4);
      let host: string;
      if (atyp === 1) host = [...(await read(4))].join('.');
      else if (atyp === 3) host = (await read((await read(1))[0]!)).toString();
      else host = ((b: Buffer) => Array.from({ length: 8 }, (_, i) => b.readUInt16BE(i * 2).toString(16)).join(':'))(await read(16)).replace(/^0:0:0:0:0:0:0:1$/, '::1');
      const port = (await read(2)).readUInt16BE(0);
      const reply = (code: number) => Buffer.from([5, code, 0, 1, 0, 0, 0, 0, 0, 0]);
      if (cmd !== 1) return client.end(reply(7));
      state.tunnels.push(`${isIP(host) === 6 ? `[${host}]` : host}:${port}`);
      await read(0);
      tunnel(state, client, host, port, () => client.write(reply(0)), () => client.end(reply(2)));
    })().catch(() => client.destroy());
  });
  state.close = closer(server, sockets);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.port = (server.address() as AddressInfo).port;
  state.url = `socks5://${auth ? `${auth}@` : ''}127.0.0.1:${state.port}`;
  return state;
}
