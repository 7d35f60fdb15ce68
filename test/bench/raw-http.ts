/**
 * A minimal HTTP/1.1 keep-alive client for load generation: one request in flight per connection,
 * each request written as a single pre-encoded buffer, the response read just far enough to find
 * its end (Content-Length or chunked). It does far less per request than a general client, so a
 * benchmark measures the server more than the client; both servers of a comparison use it alike.
 */
import net from 'node:net';

export interface RawResponse {
  status: number;
  body: Buffer;
}

const HEAD_END = Buffer.from('\r\n\r\n');

export class RawHttpConnection {
  private socket!: net.Socket;
  private buf: Buffer = Buffer.alloc(0);
  private waiting?: { resolve: (r: RawResponse) => void; reject: (e: Error) => void };

  private constructor(
    private readonly host: string,
    private readonly port: number,
  ) {}

  static async open(host: string, port: number): Promise<RawHttpConnection> {
    const c = new RawHttpConnection(host, port);
    await new Promise<void>((resolve, reject) => {
      c.socket = net.connect({ host, port, noDelay: true }, resolve);
      c.socket.once('error', reject);
    });
    c.socket.on('data', (d: Buffer) => c.onData(d));
    c.socket.on('error', (e) => c.fail(e));
    c.socket.on('close', () => c.fail(new Error('connection closed')));
    return c;
  }

  /** The bytes of one request (encode once, send many times). */
  encode(method: string, path: string, body?: string | Buffer, contentType = 'application/json'): Buffer {
    const b = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body);
    let head = `${method} ${path} HTTP/1.1\r\nHost: ${this.host}:${this.port}\r\n`;
    if (b) head += `Content-Type: ${contentType}\r\nContent-Length: ${b.length}\r\n`;
    head += '\r\n';
    return b ? Buffer.concat([Buffer.from(head, 'latin1'), b]) : Buffer.from(head, 'latin1');
  }

  send(request: Buffer): Promise<RawResponse> {
    if (this.waiting) throw new Error('one request at a time per connection');
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.socket.write(request);
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private fail(e: Error): void {
    const w = this.waiting;
    this.waiting = undefined;
    w?.reject(e);
  }

  private onData(d: Buffer): void {
    this.buf = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
    const r = this.parse();
    if (!r) return;
    const w = this.waiting;
    this.waiting = undefined;
    w?.resolve(r);
  }

  /** A complete response at the start of the buffer (removed from it), or undefined. */
  private parse(): RawResponse | undefined {
    const end = this.buf.indexOf(HEAD_END);
    if (end < 0) return undefined;
    const head = this.buf.subarray(0, end).toString('latin1');
    const status = Number(head.slice(9, 12));
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    let at = end + 4;
    if (length) {
      const n = Number(length[1]);
      if (this.buf.length < at + n) return undefined;
      const body = this.buf.subarray(at, at + n);
      this.buf = this.buf.subarray(at + n);
      return { status, body };
    }
    if (!/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
      // No body without a length (204, 304, ...).
      this.buf = this.buf.subarray(at);
      return { status, body: Buffer.alloc(0) };
    }
    const parts: Buffer[] = [];
    for (;;) {
      const eol = this.buf.indexOf('\r\n', at);
      if (eol < 0) return undefined;
      const size = parseInt(this.buf.subarray(at, eol).toString('latin1'), 16);
      if (this.buf.length < eol + 2 + size + 2) return undefined;
      if (size === 0) {
        this.buf = this.buf.subarray(eol + 4);
        return { status, body: Buffer.concat(parts) };
      }
      parts.push(this.buf.subarray(eol + 2, eol + 2 + size));
      at = eol + 2 + size + 2;
    }
  }
}
