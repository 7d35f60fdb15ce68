import { randomBytes } from 'node:crypto';
import { MESSAGES, isErrorCode } from './codes.js';

/**
 * The reply envelope. `Error` is always present, `ErrMessage` only when non-empty, `Value` always
 * present (null when there is nothing), as the origin serialises it.
 */
export interface Reply {
  Method: string;
  Code: number;
  Error: boolean;
  ErrMessage?: string;
  Value: unknown;
}

/** Thrown by method code to answer with a code; the dispatcher turns it into a Reply. */
export class ReplyError extends Error {
  constructor(
    readonly code: number,
    message?: string,
    readonly value: unknown = null,
  ) {
    super(message ?? MESSAGES[code] ?? `code ${code}`);
    this.name = 'ReplyError';
  }
}

export function reply(method: string, code: number, value: unknown = null, message?: string): Reply {
  const r: Reply = { Method: method, Code: code, Error: isErrorCode(code), Value: value ?? null };
  const text = message ?? MESSAGES[code] ?? '';
  if (code !== 0 && text) r.ErrMessage = text;
  return r;
}

export const ok = (method: string, value: unknown = null): Reply => reply(method, 0, value);

/** Already-serialised JSON placed into a reply as is (cached node lists). */
export class RawJson {
  constructor(readonly text: string) {}
}

function ordered(r: Reply): Record<string, unknown> {
  const o: Record<string, unknown> = { Method: r.Method, Code: r.Code, Error: r.Error };
  if (r.ErrMessage) o.ErrMessage = r.ErrMessage;
  o.Value = r.Value ?? null;
  return o;
}

/**
 * Serialise with the origin's key order: Method, Code, Error, ErrMessage, Value. RawJson values
 * (at any depth, e.g. inside getfullstack) are spliced in through placeholders that carry a random
 * nonce, so no string a node reports can collide with them.
 */
export function toJson(r: Reply): string {
  const raws: string[] = [];
  const nonce = randomBytes(6).toString('hex');
  const text = JSON.stringify(ordered(r), (_k, v: unknown) => {
    if (v instanceof RawJson) {
      raws.push(v.text);
      return `\u0000raw:${nonce}:${raws.length - 1}`;
    }
    return v;
  });
  if (raws.length === 0) return text;
  return text.replace(new RegExp(`"\\\\u0000raw:${nonce}:(\\d+)"`, 'g'), (_m, i: string) => raws[Number(i)]!);
}

/** Copy of a reply under another Method name (getfullstack nests replies this way). */
export function renamed(r: Reply, method: string): Reply {
  return { ...r, Method: method };
}
