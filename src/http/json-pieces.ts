/**
 * JSON.parse for large request bodies, in pieces: the bytes are decoded a slice at a time and the
 * text is parsed by an explicit-stack parser that gives the event loop back every few milliseconds,
 * so a body of tens of megabytes (a long chat, a batch of many small objects) never holds the loop
 * every API shares. JSON.parse itself cannot be paused, and parsing on a worker thread does not help:
 * the object would have to be copied back, which costs the loop more than parsing it there.
 *
 * The result is what JSON.parse gives (own data properties, `__proto__` included; the last of
 * duplicate keys wins), with two checks JSON.parse lacks, as src/http/body.ts's parseJson makes them:
 * nesting past `maxDepth` and numbers past the double range are refused. Strings are decoded by
 * JSON.parse on their own slice of the text (native speed, the same escape and control-character rules).
 */

/** Thrown for text that is not JSON; `message` is the reason, without any prefix. */
export class JsonPiecesError extends Error {}

/** How long one turn of decoding or parsing may hold the loop before it is given back. */
const SLICE_MS = 4;
/** Bytes decoded per turn (at most a few milliseconds, even for text that is all multi-byte). */
const DECODE_BYTES = 512 * 1024;

/** Give the event loop back for a turn (setImmediate: I/O callbacks run first). */
export const yieldLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** `buf` as UTF-8 text (what `buf.toString('utf8')` gives), decoded a slice per turn of the loop. */
export async function decodeInPieces(buf: Buffer): Promise<string> {
  if (buf.length <= DECODE_BYTES) return buf.toString('utf8');
  const parts: string[] = [];
  let start = 0;
  while (start < buf.length) {
    let end = Math.min(buf.length, start + DECODE_BYTES);
    // Cut before a byte that starts a character, never inside one (at most 3 continuation bytes
    // follow a lead byte; a longer run is invalid anyway and decodes byte by byte either way).
    for (let back = 0; end < buf.length && back < 4 && (buf[end]! & 0xc0) === 0x80; back++) end--;
    parts.push(buf.toString('utf8', start, end));
    start = end;
    if (start < buf.length) await yieldLoop();
  }
  return parts.join('');
}

/** Parser states: a value is due, then a comma or a closer, then (in an object) a key and colon. */
const State = { Value: 0, AfterValue: 1, Key: 2, End: 3 } as const;
type State = (typeof State)[keyof typeof State];

interface Frame {
  container: Record<string, unknown> | unknown[];
  array: boolean;
  key: string;
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function unexpected(text: string, i: number): JsonPiecesError {
  if (i >= text.length) return new JsonPiecesError('Unexpected end of JSON input');
  return new JsonPiecesError(`Unexpected token ${JSON.stringify(text[i])} in JSON at position ${i}`);
}

/**
 * Parse `text` as JSON, giving the loop back every few milliseconds. Throws JsonPiecesError for
 * text that is not JSON, nests deeper than `maxDepth` levels, or holds a number past the double range.
 */
export async function parseInPieces(text: string, maxDepth: number): Promise<unknown> {
  const n = text.length;
  const stack: Frame[] = [];
  let result: unknown;
  let state: State = State.Value;
  let i = 0;
  let steps = 0;
  let checkedAt = 0;
  let sliceStart = performance.now();

  const skip = (at: number): number => {
    while (at < n && isSpace(text.charCodeAt(at))) at++;
    return at;
  };
  /** The string whose opening quote is at `at`, and the index after its closing quote. */
  const readString = (at: number): [string, number] => {
    let from = at + 1;
    for (;;) {
      const q = text.indexOf('"', from);
      if (q === -1) throw new JsonPiecesError(`Unterminated string in JSON at position ${n}`);
      let k = q - 1;
      while (text.charCodeAt(k) === 0x5c) k--;
      if ((q - 1 - k) % 2 === 0) {
        try {
          return [JSON.parse(text.slice(at, q + 1)) as string, q + 1];
        } catch (e) {
          throw new JsonPiecesError(`Bad string in JSON at position ${at}: ${(e as Error).message}`);
        }
      }
      from = q + 1;
    }
  };
  /** Put a finished value in its container (or make it the result); the state after it. */
  const place = (value: unknown): State => {
    const top = stack[stack.length - 1];
    if (!top) {
      result = value;
      return State.End;
    }
    if (top.array) (top.container as unknown[]).push(value);
    else if (top.key === '__proto__') Object.defineProperty(top.container, '__proto__', { value, writable: true, enumerable: true, configurable: true });
    else (top.container as Record<string, unknown>)[top.key] = value;
    return State.AfterValue;
  };

  i = skip(0);
  for (;;) {
    // The clock is read every 1024 steps or 64 Ki characters, whichever comes first.
    if (++steps === 1024 || i - checkedAt > 65_536) {
      steps = 0;
      checkedAt = i;
      if (performance.now() - sliceStart > SLICE_MS) {
        await yieldLoop();
        sliceStart = performance.now();
      }
    }
    if (state === State.Value) {
      const c = text.charCodeAt(i);
      if (c === 0x7b || c === 0x5b) {
        if (stack.length + 1 > maxDepth) throw new JsonPiecesError(`nested deeper than ${maxDepth} levels`);
        const array = c === 0x5b;
        i = skip(i + 1);
        if (text.charCodeAt(i) === (array ? 0x5d : 0x7d)) {
          i = skip(i + 1);
          state = place(array ? [] : {});
        } else {
          stack.push({ container: array ? [] : {}, array, key: '' });
          state = array ? State.Value : State.Key;
        }
      } else if (c === 0x22) {
        const [s, next] = readString(i);
        i = skip(next);
        state = place(s);
      } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
        NUMBER.lastIndex = i;
        const m = NUMBER.exec(text);
        if (!m) throw unexpected(text, i + 1);
        const value = Number(m[0]);
        if (!Number.isFinite(value)) throw new JsonPiecesError('a number is out of range');
        i = skip(i + m[0].length);
        state = place(value);
      } else if (text.startsWith('true', i)) {
        i = skip(i + 4);
        state = place(true);
      } else if (text.startsWith('false', i)) {
        i = skip(i + 5);
        state = place(false);
      } else if (text.startsWith('null', i)) {
        i = skip(i + 4);
        state = place(null);
      } else {
        throw unexpected(text, i);
      }
    } else if (state === State.AfterValue) {
      const top = stack[stack.length - 1]!;
      const c = text.charCodeAt(i);
      if (c === 0x2c) {
        i = skip(i + 1);
        state = top.array ? State.Value : State.Key;
      } else if (c === (top.array ? 0x5d : 0x7d)) {
        stack.pop();
        i = skip(i + 1);
        state = place(top.container);
      } else {
        throw unexpected(text, i);
      }
    } else if (state === State.Key) {
      if (text.charCodeAt(i) !== 0x22) throw unexpected(text, i);
      const [key, next] = readString(i);
      i = skip(next);
      if (text.charCodeAt(i) !== 0x3a) throw unexpected(text, i);
      i = skip(i + 1);
      stack[stack.length - 1]!.key = key;
      state = State.Value;
    } else {
      if (i < n) throw new JsonPiecesError(`Unexpected non-whitespace character after JSON at position ${i}`);
      return result;
    }
  }
}

/** Arrays longer than this make stringifyInPieces work in pieces; shorter, it is JSON.stringify. */
export const PIECES_ITEMS = 1000;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return (proto === Object.prototype || proto === null) && typeof (v as { toJSON?: unknown }).toJSON !== 'function';
}

/**
 * What JSON.stringify(value) gives, for an upstream body: a plain object whose top-level arrays
 * (a long chat's messages) are stringified a slice of elements per turn of the loop, the slices
 * giving it back every few milliseconds. Without such an array (or for anything but a plain
 * object) it is JSON.stringify, synchronously: a string, not a promise.
 */
export function stringifyInPieces(value: unknown): string | Promise<string> {
  return isPlainObject(value) && hasLongArray(value) ? stringifyObject(value) : JSON.stringify(value);
}

/** Whether an object has a top-level array longer than PIECES_ITEMS (a body worth handling in pieces). */
export function hasLongArray(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  for (const k in value) {
    const v = (value as Record<string, unknown>)[k];
    if (Array.isArray(v) && v.length > PIECES_ITEMS) return true;
  }
  return false;
}

async function stringifyObject(value: Record<string, unknown>): Promise<string> {
  const out: string[] = [];
  let sliceStart = performance.now();
  // Object.keys: own enumerable string keys in JSON.stringify's order.
  for (const k of Object.keys(value)) {
    const v = value[k];
    if (!Array.isArray(v) || v.length <= PIECES_ITEMS || typeof (v as { toJSON?: unknown }).toJSON === 'function') {
      const text = JSON.stringify(v);
      // undefined, a function, a symbol: left out, as JSON.stringify leaves them out of an object.
      if (text !== undefined) out.push(`${out.length > 0 ? ',' : ''}${JSON.stringify(k)}:${text}`);
      continue;
    }
    // Each slice's elements joined at its end: one join of every element would hold the loop again.
    const slices: string[] = [];
    let items: string[] = [];
    for (let i = 0; i < v.length; i++) {
      // An element JSON.stringify has no text for (undefined, a function, a hole) is null in an array.
      items.push(JSON.stringify(v[i]) ?? 'null');
      if ((i & 255) === 255 && performance.now() - sliceStart > SLICE_MS) {
        slices.push(items.join(','));
        items = [];
        await yieldLoop();
        sliceStart = performance.now();
      }
    }
    if (items.length > 0) slices.push(items.join(','));
    out.push(`${out.length > 0 ? ',' : ''}${JSON.stringify(k)}:[${slices.join(',')}]`);
  }
  return `{${out.join('')}}`;
}
