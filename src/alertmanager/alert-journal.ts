/**
 * The alert journal's files: `<database>-alerts.<n>`, append-only segments of framed records, each
 * written with one writev(2) before the POST is answered (what the kernel took survives `kill -9`;
 * like SQLite's WAL with synchronous=NORMAL, only a crash of the machine can lose the last ones).
 * A record is `u32 length | u32 CRC-32 | payload`, the payload `u32 n | n bytes of JSON entry |
 * u32 m | m bytes of request body | outcome bytes`. Reading stops at the first record that is cut
 * short or fails its checksum (a machine crash in the middle of a write).
 *
 * Writes go to the newest segment this process opened; segments found at start are only read. A
 * compaction seals the segments that exist when it starts (`seal`) and deletes them when its
 * snapshot holds their states (`removeSealed`); writes meanwhile go to a new segment, replayed
 * after the older ones.
 */
import { closeSync, ftruncateSync, openSync, readdirSync, readFileSync, unlinkSync, writevSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { crc32 } from 'node:zlib';

export interface JournalRecord {
  /** The JSON entry (what it is depends on the caller). */
  entry: string;
  /** Request body, if the record carries one. */
  body?: Buffer;
  /** Bytes after the body. */
  outcome?: Buffer;
}

const HEADER = 8;

export class AlertJournalFiles {
  private readonly dir: string;
  private readonly prefix: string;
  /** Segment numbers on disk, oldest first. */
  private segments: number[];
  private active: { n: number; fd: number; size: number } | undefined;
  private sealed: number[] = [];

  constructor(databasePath: string) {
    this.dir = dirname(databasePath);
    this.prefix = `${basename(databasePath)}-alerts.`;
    this.segments = this.list();
  }

  private list(): number[] {
    const out: number[] = [];
    for (const name of readdirSync(this.dir)) {
      if (!name.startsWith(this.prefix)) continue;
      const n = Number(name.slice(this.prefix.length));
      if (Number.isSafeInteger(n) && n >= 0) out.push(n);
    }
    return out.sort((a, b) => a - b);
  }

  private path(n: number): string {
    return join(this.dir, `${this.prefix}${n}`);
  }

  /** Every readable record of every segment, oldest first. */
  readAll(): JournalRecord[] {
    const out: JournalRecord[] = [];
    this.forEachSegment((records) => out.push(...records));
    return out;
  }

  /**
   * The records segment by segment, oldest first: a replay holds one segment in memory at a time
   * (compaction keeps each one bounded), never the whole journal. Returns the bytes read.
   */
  forEachSegment(fn: (records: JournalRecord[]) => void): number {
    let bytes = 0;
    for (const n of this.segments) {
      const data = readFileSync(this.path(n));
      bytes += data.length;
      const records: JournalRecord[] = [];
      readSegment(data, records);
      fn(records);
    }
    return bytes;
  }

  /**
   * Append one record (returns its size); durable against a process kill when it returns. Throws when it cannot.
   * One writev(2) of the framing and the caller's buffers: the body (tens of KiB) is not copied.
   */
  append(entry: string, body?: Buffer, outcome?: Buffer): number {
    const entryLen = Buffer.byteLength(entry);
    const bodyLen = body?.length ?? 0;
    const payloadLen = 4 + entryLen + 4 + bodyLen + (outcome?.length ?? 0);
    const head = Buffer.allocUnsafe(HEADER + 4 + entryLen + 4);
    head.writeUInt32LE(payloadLen, 0);
    head.writeUInt32LE(entryLen, HEADER);
    head.write(entry, HEADER + 4, 'utf8');
    head.writeUInt32LE(bodyLen, HEADER + 4 + entryLen);
    let crc = crc32(head.subarray(HEADER));
    const parts: Buffer[] = [head];
    if (body && bodyLen > 0) {
      crc = crc32(body, crc);
      parts.push(body);
    }
    if (outcome && outcome.length > 0) {
      crc = crc32(outcome, crc);
      parts.push(outcome);
    }
    head.writeUInt32LE(crc, 4);
    const total = HEADER + payloadLen;
    const seg = this.open();
    let written: number;
    try {
      written = writevSync(seg.fd, parts);
    } catch (e) {
      undoTail(seg);
      throw e;
    }
    if (written !== total) {
      undoTail(seg);
      throw new Error(`alert journal: short write to ${this.path(seg.n)} (${written} of ${total} bytes; disk full?)`);
    }
    seg.size += written;
    return written;
  }

  private open(): { n: number; fd: number; size: number } {
    if (!this.active) {
      const n = (this.segments.at(-1) ?? -1) + 1;
      const fd = openSync(this.path(n), 'a', 0o600);
      this.segments.push(n);
      this.active = { n, fd, size: 0 };
    }
    return this.active;
  }

  /** Stop writing to the segments there are now (a compaction starts); later writes open a new one. */
  seal(): void {
    this.closeActive();
    this.sealed = [...this.segments];
  }

  /** Delete the sealed segments (their states are in the snapshot now). */
  removeSealed(): void {
    for (const n of this.sealed) {
      try {
        unlinkSync(this.path(n));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      }
    }
    const gone = new Set(this.sealed);
    this.segments = this.segments.filter((n) => !gone.has(n));
    this.sealed = [];
  }

  private closeActive(): void {
    if (this.active) closeSync(this.active.fd);
    this.active = undefined;
  }

  close(): void {
    this.closeActive();
  }
}

/** A short or failed write must not leave a torn record that later appends would follow. */
function undoTail(seg: { fd: number; size: number }): void {
  try {
    ftruncateSync(seg.fd, seg.size);
  } catch {
    /* the descriptor is unusable: the next append fails the same way */
  }
}

/** Append the records of one segment's bytes to `out`, up to the first damaged one. */
function readSegment(buf: Buffer, out: JournalRecord[]): void {
  let at = 0;
  while (at + HEADER <= buf.length) {
    const len = buf.readUInt32LE(at);
    const end = at + HEADER + len;
    if (len < 8 || end > buf.length) return;
    const payload = buf.subarray(at + HEADER, end);
    if (crc32(payload) !== buf.readUInt32LE(at + 4)) return;
    const entryLen = payload.readUInt32LE(0);
    if (8 + entryLen > len) return;
    const bodyAt = 8 + entryLen;
    const bodyLen = payload.readUInt32LE(4 + entryLen);
    if (bodyAt + bodyLen > len) return;
    const rec: JournalRecord = { entry: payload.toString('utf8', 4, 4 + entryLen) };
    if (bodyLen > 0) {
      rec.body = payload.subarray(bodyAt, bodyAt + bodyLen);
      rec.outcome = payload.subarray(bodyAt + bodyLen);
    }
    out.push(rec);
    at = end;
  }
}
