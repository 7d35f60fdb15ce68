/**
 * A batch's input: JSONL of `{custom_id, method, url, body}`. Lines are read from the file a chunk
 * at a time, each bounded (a line over MAX_LINE_BYTES is reported, never held whole), numbered from
 * 1 as in the file; blank lines are skipped.
 */
import { createReadStream } from 'node:fs';
import type { BatchError } from './store.js';

export const MAX_LINE_BYTES = 8 * 1024 * 1024;
export const MAX_LINES = 50_000;
const MAX_REPORTED_ERRORS = 100;

export interface RawLine {
  line: number;
  text?: string;
  tooLong?: boolean;
}

export async function* jsonlLines(path: string, maxLineBytes = MAX_LINE_BYTES): AsyncGenerator<RawLine> {
  let parts: Buffer[] = [];
  let size = 0;
  let tooLong = false;
  let line = 0;
  const emit = (): RawLine | undefined => {
    line++;
    const out: RawLine = tooLong ? { line, tooLong: true } : { line, text: Buffer.concat(parts, size).toString('utf8') };
    parts = [];
    size = 0;
    tooLong = false;
    return out.tooLong || out.text!.trim() !== '' ? out : undefined;
  };
  for await (const chunk of createReadStream(path, { highWaterMark: 256 * 1024 }) as AsyncIterable<Buffer>) {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl < 0 ? chunk.length : nl;
      if (!tooLong) {
        if (size + (end - start) > maxLineBytes) {
          tooLong = true;
          parts = [];
          size = 0;
        } else if (end > start) {
          parts.push(chunk.subarray(start, end));
          size += end - start;
        }
      }
      if (nl < 0) break;
      const l = emit();
      if (l) yield l;
      start = nl + 1;
    }
  }
  if (size > 0 || tooLong) {
    const l = emit();
    if (l) yield l;
  }
}

export interface BatchLine {
  line: number;
  customId: string;
  url: string;
  body: Record<string, unknown>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One line checked: the request, or why it is invalid. */
export function parseLine(raw: RawLine, endpoint: string): BatchLine | BatchError {
  const err = (code: string, message: string, param: string | null = null): BatchError => ({ code, message, param, line: raw.line });
  if (raw.tooLong) return err('invalid_request', `line ${raw.line} is longer than ${MAX_LINE_BYTES} bytes`);
  let v: unknown;
  try {
    v = JSON.parse(raw.text!);
  } catch {
    return err('invalid_json_line', `line ${raw.line} is not valid JSON`);
  }
  if (!isObject(v)) return err('invalid_json_line', `line ${raw.line} is not a JSON object`);
  if (typeof v.custom_id !== 'string' || v.custom_id === '') return err('missing_required_parameter', `line ${raw.line}: custom_id is required (a string)`, 'custom_id');
  if (v.method !== 'POST') return err('invalid_request', `line ${raw.line}: method must be POST`, 'method');
  if (v.url !== endpoint) return err('mismatched_endpoint', `line ${raw.line}: url ${JSON.stringify(v.url)} does not match the batch's endpoint ${endpoint}`, 'url');
  if (!isObject(v.body)) return err('invalid_request', `line ${raw.line}: body must be a JSON object`, 'body');
  return { line: raw.line, customId: v.custom_id, url: v.url, body: v.body };
}

export const isBatchError = (v: BatchLine | BatchError): v is BatchError => 'code' in v;

/** The whole input checked before a line runs: the line count, or the errors (with their lines). */
export async function validateInput(path: string, endpoint: string): Promise<{ total: number; errors: BatchError[] }> {
  const errors: BatchError[] = [];
  const seen = new Set<string>();
  let total = 0;
  for await (const raw of jsonlLines(path)) {
    const l = parseLine(raw, endpoint);
    total++;
    if (isBatchError(l)) {
      if (errors.length < MAX_REPORTED_ERRORS) errors.push(l);
      continue;
    }
    if (seen.has(l.customId)) {
      if (errors.length < MAX_REPORTED_ERRORS) errors.push({ code: 'duplicate_custom_id', message: `line ${l.line}: custom_id ${JSON.stringify(l.customId)} is used by an earlier line`, param: 'custom_id', line: l.line });
      continue;
    }
    seen.add(l.customId);
  }
  if (total === 0) errors.push({ code: 'empty_file', message: 'the input file has no requests', param: null, line: null });
  if (total > MAX_LINES) errors.push({ code: 'too_many_requests', message: `the input file has ${total} requests; at most ${MAX_LINES}`, param: null, line: null });
  return { total, errors };
}
