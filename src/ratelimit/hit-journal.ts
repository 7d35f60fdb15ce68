import { closeSync, fstatSync, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';

/** A counter's state as the journal records it; count 0 records a deletion. */
export interface JournalRecord {
  key: string;
  count: number;
  resetAt: number;
}

/**
 * The file adapter's hit journal: one appended line per hit with the counter's whole new state
 * (`count<TAB>resetAt<TAB>"key"`), written with a single write(2) before the hit is answered.
 * A process killed with -9 loses nothing the kernel accepted; replay applies the lines in order
 * (each line is a full state, so replaying a line twice is harmless) and skips a torn last line.
 * The file is emptied after its records are folded into the SQLite table.
 */
export class HitJournal {
  private fd: number;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'a+', 0o600);
  }

  /** Append one record; throws when the file cannot be written (the caller blocks the hit). */
  append(key: string, count: number, resetAt: number): void {
    writeSync(this.fd, `${count}\t${resetAt}\t${JSON.stringify(key)}\n`);
  }

  /** Every complete, well-formed record, oldest first. */
  read(): JournalRecord[] {
    const out: JournalRecord[] = [];
    const text = readFileSync(this.path, 'utf8');
    for (const line of text.split('\n')) {
      const rec = parseRecord(line);
      if (rec) out.push(rec);
    }
    return out;
  }

  /** Bytes in the file (its records are not yet in the table). */
  size(): number {
    return fstatSync(this.fd).size;
  }

  /** Drop every record (they are now in the table). Appends go on at the new end. */
  clear(): void {
    ftruncateSync(this.fd, 0);
  }

  close(): void {
    closeSync(this.fd);
  }
}

function parseRecord(line: string): JournalRecord | null {
  const a = line.indexOf('\t');
  const b = a < 0 ? -1 : line.indexOf('\t', a + 1);
  if (b < 0) return null;
  const count = Number(line.slice(0, a));
  const resetAt = Number(line.slice(a + 1, b));
  if (!Number.isSafeInteger(count) || count < 0 || !Number.isSafeInteger(resetAt)) return null;
  try {
    const key: unknown = JSON.parse(line.slice(b + 1));
    return typeof key === 'string' ? { key, count, resetAt } : null;
  } catch {
    return null; // a line torn by a crash of the machine (a killed process cannot tear one write)
  }
}
