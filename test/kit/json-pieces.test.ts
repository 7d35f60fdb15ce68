/**
 * The in-pieces JSON parser gives what JSON.parse gives, refuses what the body reader refuses
 * (too deep, numbers past the double range, text that is not JSON), and a large body parsed with
 * it never holds the event loop for long.
 */
import { describe, expect, it } from 'vitest';
import { decodeInPieces, hasLongArray, parseInPieces, JsonPiecesError, PIECES_ITEMS, stringifyInPieces } from '../../src/http/json-pieces.js';
import { parseJsonBody, PARSE_IN_PIECES_BYTES } from '../../src/http/body.js';
import { MAX_JSON_DEPTH } from '../../src/http/json-depth.js';
import { watchLoop } from '../helpers/loop-hold.js';

const same = async (text: string) => expect(await parseInPieces(text, MAX_JSON_DEPTH)).toStrictEqual(JSON.parse(text));

describe('parseInPieces', () => {
  it('parses what JSON.parse parses, to the same value', async () => {
    for (const text of [
      '0', '-0', '1.5e3', '-12.25E-2', '"x"', 'true', 'false', 'null', ' [ ] ', '{}', '[1,[2,[3,{}]],{"a":[]}]',
      '{"a":1,"b":{"c":[true,false,null,"s\\u00e9\\n\\"q\\\\"]},"a":2}',
      '{"2":"two","1":"one","b":"x","a":"y"}',
      '"\\\\"', '["\\\\\\"", "a\\\\"]', '\n\t{ "k" : [ 1 , 2 ] }\r\n', '"é😀"', '[1e308, 5e-324, 123456789012345678901234567890]',
    ]) {
      await same(text);
    }
  });

  it('keeps __proto__ as an own property, as JSON.parse does', async () => {
    const v = (await parseInPieces('{"__proto__":{"polluted":1},"a":1}', 8)) as Record<string, unknown>;
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.keys(v)).toEqual(['__proto__', 'a']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(v).toStrictEqual(JSON.parse('{"__proto__":{"polluted":1},"a":1}'));
  });

  it('agrees with JSON.parse on generated documents', async () => {
    let seed = 7;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
    const gen = (d: number): unknown => {
      const k = rnd(d > 4 ? 4 : 7);
      if (k === 0) return rnd(1000) - 500 + rnd(100) / 7;
      if (k === 1) return String.fromCharCode(...Array.from({ length: rnd(12) }, () => [0x22, 0x5c, 0x0a, 0x41, 0xe9, 0x1f, 0x2028][rnd(7)]!));
      if (k === 2) return [true, false, null][rnd(3)];
      if (k === 3) return rnd(10) - 5;
      if (k === 4) return Array.from({ length: rnd(5) }, () => gen(d + 1));
      return Object.fromEntries(Array.from({ length: rnd(5) }, () => [['a', 'b', '__proto__', '1', ''][rnd(5)]!, gen(d + 1)]));
    };
    for (let t = 0; t < 300; t++) {
      const text = JSON.stringify(gen(0), null, rnd(2) ? 1 : undefined);
      await same(text);
    }
  });

  it('refuses what JSON.parse refuses', async () => {
    for (const text of ['', ' ', '[1,]', '{"a":1,}', '{"a" 1}', '{a:1}', '[1 2]', '01', '1.', '-', '.5', '"\u0001"', '"\\x"', '"abc', '[', '{"a":[}', 'tru', 'nul', '[1]x', '"a"  "b"', '\u00a0 1', '[1] ,']) {
      expect(() => JSON.parse(text), text).toThrow();
      await expect(parseInPieces(text, MAX_JSON_DEPTH), text).rejects.toBeInstanceOf(JsonPiecesError);
    }
  });

  it('refuses nesting past the depth and numbers past the double range', async () => {
    await expect(parseInPieces('['.repeat(4) + ']'.repeat(4), 4)).resolves.toEqual([[[[]]]]);
    await expect(parseInPieces('['.repeat(5) + ']'.repeat(5), 4)).rejects.toThrow(/nested deeper than 4 levels/);
    await expect(parseInPieces('{"a":{"b":{}}}', 2)).rejects.toThrow(/nested deeper/);
    await expect(parseInPieces('[1e400]', 8)).rejects.toThrow(/out of range/);
    await expect(parseInPieces('-1' + '0'.repeat(400), 8)).rejects.toThrow(/out of range/);
  });
});

describe('decodeInPieces', () => {
  it('decodes as Buffer.toString does, multi-byte characters across the slices and invalid bytes too', async () => {
    const text = 'aé€😀'.repeat(300_000);
    expect(await decodeInPieces(Buffer.from(text))).toBe(text);
    const bytes = Buffer.from(text);
    for (let i = 5; i < bytes.length; i += 100_003) bytes[i] = 0xff;
    bytes[524_288] = 0x80;
    expect(await decodeInPieces(bytes)).toBe(bytes.toString('utf8'));
  });
});

describe('parseJsonBody on a large body', () => {
  it('answers 400 invalid_json for a large body that is not JSON', async () => {
    const big = Buffer.from(`[${'1,'.repeat(PARSE_IN_PIECES_BYTES)}]`);
    await expect(parseJsonBody(big)).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/^invalid JSON: /) });
    const deep = Buffer.from(' '.repeat(PARSE_IN_PIECES_BYTES) + '['.repeat(300) + ']'.repeat(300));
    await expect(parseJsonBody(deep)).rejects.toMatchObject({ status: 400, message: `invalid JSON: nested deeper than ${MAX_JSON_DEPTH} levels` });
  });

  it('parses 12 MB of small objects and a 4 MB string without holding the loop', async () => {
    const objects = Array.from({ length: 200_000 }, (_, i) => ({ role: 'user', content: `message ${i} é`, n: i, ok: i % 2 === 0 }));
    const many = Buffer.from(JSON.stringify({ messages: objects, text: 'x'.repeat(4 << 20) }));
    // Measured: JSON.parse of this body holds the loop about 150 ms (quiet machine); in pieces the
    // longest hold is a few milliseconds (the 4 MB string is one native JSON.parse of its slice).
    const watch = watchLoop();
    const value = (await parseJsonBody(many)) as { messages: unknown[]; text: string };
    const seen = watch.stop();
    expect(value.messages).toHaveLength(200_000);
    expect(value.messages[123_456]).toEqual(objects[123_456]);
    expect(value.text).toHaveLength(4 << 20);
    expect(seen.maxHoldMs, `loop held (ms); event-loop delay max ${seen.maxDelayMs.toFixed(0)} ms`).toBeLessThan(40);
  }, 60_000);
});

describe('stringifyInPieces', () => {
  it('gives what JSON.stringify gives: key order, left-out and null values, long arrays and the rest', async () => {
    const long = Array.from({ length: PIECES_ITEMS * 3 + 7 }, (_, i) => (i % 97 === 0 ? undefined : i % 89 === 0 ? () => 1 : { role: i % 2 ? 'assistant' : 'user', content: `m ${i} é "q"`, n: i, x: undefined }));
    const sparse = new Array(PIECES_ITEMS + 5);
    sparse[3] = 'three';
    const values: unknown[] = [
      { model: 'm', messages: long, stream: false, skip: undefined, f: () => 1, tools: [{ a: 1 }], nested: { deep: long.slice(0, 10) }, '"odd key"': 1, after: long },
      { sparse, date: new Date(0), n: null },
      { small: [1, 2, 3] },
      [1, 2],
      'text',
      { toJSON: () => ({ replaced: true }), messages: long },
      Object.assign(Object.create(null) as object, { messages: long, z: 1 }),
    ];
    for (const v of values) {
      const piecewise = stringifyInPieces(v);
      expect(await piecewise).toBe(JSON.stringify(v));
    }
  });

  it('is JSON.stringify, synchronously, without a long array', () => {
    expect(stringifyInPieces({ a: [1], b: 'x' })).toBe('{"a":[1],"b":"x"}');
    expect(hasLongArray({ a: new Array(PIECES_ITEMS).fill(0) })).toBe(false);
    expect(hasLongArray({ a: new Array(PIECES_ITEMS + 1).fill(0) })).toBe(true);
    expect(typeof stringifyInPieces({ a: new Array(PIECES_ITEMS + 1).fill(0) })).not.toBe('string');
  });

  it('stringifies a chat of 200,000 messages without holding the loop', async () => {
    const messages = Array.from({ length: 200_000 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `message ${i} with some words` }));
    const body = { model: 'm', messages, max_tokens: 5 };
    // Measured: JSON.stringify of this body holds the loop 60-90 ms (loaded machine); in pieces a few ms a turn.
    const watch = watchLoop();
    const text = await stringifyInPieces(body);
    const seen = watch.stop();
    expect(text).toBe(JSON.stringify(body));
    expect(seen.maxHoldMs, `loop held (ms); event-loop delay max ${seen.maxDelayMs.toFixed(0)} ms`).toBeLessThan(40);
  }, 60_000);
});
