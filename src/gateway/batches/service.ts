/**
 * Batches (OpenAI's Batch API) run through the gateway's own request pipeline: each line becomes an
 * in-process request to its route (resolution, combos, fallback, limits, budgets, cache, usage log,
 * cost) as the batch's API key, at most `concurrency` lines at once across all batches.
 *
 * Life of a batch: validating (the whole input is checked; errors name their lines) → in_progress →
 * finalizing (the output and error files are written) → completed; or failed (invalid input),
 * cancelling → cancelled, expired (the 24 h window passed; unrun lines go to the error file). Each
 * line's result is recorded in the database as it arrives, so a batch interrupted by a stop or a
 * kill -9 resumes at the next start and never runs a recorded line again.
 *
 * Several daemons on one database (the store's `shared` part): the validated lines are kept in the
 * database and every daemon runs the batch, taking a few lines at a time, each line handed to one
 * daemon only; a daemon that dies leaves its lines to the others once its claim is stale. A cancel
 * through any daemon stops them all; the daemon that sees the last line recorded writes the output.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { once } from 'node:events';
import type { Logger } from 'pino';
import type { Clock } from '../../http/clock.js';
import type { Principal } from '../auth.js';
import type { FileService } from '../files/service.js';
import { isBatchError, jsonlLines, parseLine, validateInput, type BatchLine } from './lines.js';
import type { Store } from '../../store/index.js';
import { sqliteSql } from '../sql.js';
import { BatchStore, TERMINAL, type BatchData, type BatchError, type BatchRecord, type BatchStatus } from './store.js';

export const BATCH_ENDPOINTS = ['/v1/chat/completions', '/v1/responses', '/v1/embeddings', '/v1/moderations'] as const;
export const DEFAULT_BATCH_CONCURRENCY = 16;
const WINDOW_MS = 24 * 3600 * 1000;
/** A claimed line not recorded within this long is handed out again (its daemon is taken for dead). */
export const CLAIM_STALE_MS = 10 * 60 * 1000;
/** How often a daemon sharing batches looks for running batches it is not working on. */
const SHARED_SCAN_MS = 2000;

/** One in-process request to a gateway route, as `principal`; the answer's status, headers and body. */
export type LineCall = (principal: Principal, url: string, body: Record<string, unknown>, requestId: string) => Promise<{ status: number; headers: Record<string, unknown>; body: string }>;

export type BatchEvent = 'batch.completed' | 'batch.failed' | 'batch.expired' | 'batch.cancelled';

/** A counting semaphore: `acquire` waits for a free slot. */
class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];
  constructor(n: number) {
    this.free = n;
  }
  async acquire(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return;
    }
    await new Promise<void>((r) => this.waiting.push(r));
  }
  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}

export class BatchService {
  private call: LineCall | undefined;
  private readonly slots: Slots;
  private readonly running = new Map<string, Promise<void>>();
  private readonly cancelRequested = new Set<string>();
  private readonly listeners: ((event: BatchEvent, batch: BatchRecord) => void)[] = [];
  private stopping = false;
  private scan?: NodeJS.Timeout;

  constructor(
    readonly store: BatchData,
    private readonly files: FileService,
    private readonly clock: Clock,
    private readonly log: Logger,
    /** The principal a batch's lines run as: its key, or why it cannot run (revoked, disabled). */
    private readonly principalOf: (owner: string) => Principal | string,
    concurrency = DEFAULT_BATCH_CONCURRENCY,
    /** This daemon among those sharing the store (claims name it). */
    private readonly daemonId = 'local',
  ) {
    this.slots = new Slots(concurrency);
    this.concurrency = concurrency;
  }

  private readonly concurrency: number;

  /** On the daemon's own SQLite store. */
  static local(db: Store, files: FileService, clock: Clock, log: Logger, principalOf: (owner: string) => Principal | string, concurrency?: number): BatchService {
    return new BatchService(new BatchStore(sqliteSql(db)), files, clock, log, principalOf, concurrency);
  }

  /** The in-process request function (the gateway's own dispatcher), given once the router exists. */
  attach(call: LineCall): void {
    this.call = call;
  }

  /** batch.completed, batch.failed, batch.expired, batch.cancelled (for webhooks). */
  onEvent(listener: (event: BatchEvent, batch: BatchRecord) => void): void {
    this.listeners.push(listener);
  }

  /** Resume every batch a stop or a crash interrupted (shared: and join the ones other daemons run). */
  async start(): Promise<void> {
    await this.resume();
    const shared = this.store.shared;
    if (!shared) return;
    shared.onChange((id) => this.kick(id));
    this.scan = setInterval(() => {
      void this.resume().catch((e: unknown) => this.log.warn({ err: (e as Error).message }, 'gateway: looking for shared batches failed'));
    }, SHARED_SCAN_MS);
    this.scan.unref();
  }

  private async resume(): Promise<void> {
    for (const b of await this.store.unfinished()) {
      if (b.status === 'cancelling') this.cancelRequested.add(b.id);
      this.kick(b.id);
    }
  }

  /** Stop starting lines; lines in flight finish and are recorded. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.scan);
    await Promise.allSettled([...this.running.values()]);
  }

  async create(b: { owner: string; endpoint: string; inputFileId: string; completionWindow: string; metadata?: Record<string, string> }): Promise<BatchRecord> {
    const now = this.clock.now();
    const rec: BatchRecord = { id: `batch_${randomBytes(12).toString('hex')}`, ...b, status: 'validating', total: 0, createdAt: now, expiresAt: now + WINDOW_MS };
    await this.store.insert(rec);
    this.kick(rec.id);
    return rec;
  }

  /** Cancel a batch that has not finished; false when it has. */
  async cancel(id: string): Promise<boolean> {
    const b = await this.store.get(id);
    if (!b || TERMINAL.has(b.status) || b.status === 'finalizing') return false;
    if (b.status !== 'cancelling') await this.store.update(id, { status: 'cancelling', cancellingAt: this.clock.now() });
    this.cancelRequested.add(id);
    await this.store.shared?.announce(id);
    if (!this.running.has(id)) this.kick(id);
    return true;
  }

  private kick(id: string): void {
    if (this.running.has(id) || this.stopping) return;
    const p = this.run(id)
      .catch(async (e: unknown) => {
        this.log.error({ err: e, batch: id }, 'gateway: batch run failed');
        if (!this.stopping) await this.fail(id, [{ code: 'internal_error', message: `the batch could not run: ${(e as Error).message}`, param: null, line: null }]).catch(() => undefined);
      })
      .finally(() => this.running.delete(id));
    this.running.set(id, p);
  }

  private async emit(event: BatchEvent, id: string): Promise<void> {
    const b = await this.store.get(id);
    if (!b) return;
    for (const l of this.listeners) {
      try {
        l(event, b);
      } catch (e) {
        this.log.warn({ err: e, event }, 'gateway: batch event listener failed');
      }
    }
  }

  private async fail(id: string, errors: BatchError[]): Promise<void> {
    await this.store.update(id, { status: 'failed', failedAt: this.clock.now(), errors });
    await this.emit('batch.failed', id);
  }

  private async run(id: string): Promise<void> {
    let b = await this.store.get(id);
    if (!b || TERMINAL.has(b.status)) return;
    const shared = this.store.shared;
    if (b.status === 'cancelling') this.cancelRequested.add(id);
    const input = await this.files.store.get(b.inputFileId);
    if (b.status === 'validating') {
      if (this.cancelRequested.has(id)) return this.finish(b, 'cancelled');
      if (!input) return this.fail(id, [{ code: 'invalid_file', message: `input file ${b.inputFileId} no longer exists`, param: 'input_file_id', line: null }]);
      const path = await this.files.localPath(input.id);
      const { total, errors } = await validateInput(path, b.endpoint);
      if (errors.length > 0) return this.fail(id, errors);
      if (shared) await this.shareLines(id, path);
      await this.store.update(id, { status: 'in_progress', inProgressAt: this.clock.now(), total });
      b = (await this.store.get(id))!;
    }
    if (b.status === 'in_progress' || b.status === 'cancelling') {
      if (!input) return this.fail(id, [{ code: 'invalid_file', message: `input file ${b.inputFileId} was deleted while the batch ran`, param: 'input_file_id', line: null }]);
      const path = await this.files.localPath(input.id);
      const expired = shared ? await this.runClaimedLines(b) : await this.runLines(b, path);
      if (this.stopping) return; // resumed at the next start
      const final: BatchStatus = this.cancelRequested.has(id) ? 'cancelled' : expired ? 'expired' : 'completed';
      if (shared) {
        // Lines other daemons still hold: the one that records the last of them finishes the batch.
        const c = await this.store.counts(id);
        if (final === 'completed' && c.completed + c.failed < b.total) return;
        if (final === 'expired') await this.recordExpired(b, path);
        if (!(await shared.beginFinalizing(id, this.clock.now()))) return;
        return this.finish((await this.store.get(id))!, final);
      }
      if (final === 'expired') await this.recordExpired(b, path);
      return this.finish(b, final);
    }
    if (b.status === 'finalizing') {
      // Several daemons: another one is writing the output now, unless it has been at it too long (died).
      if (shared && this.clock.now() - (b.finalizingAt ?? 0) < CLAIM_STALE_MS) return;
      const latest = b.cancellingAt !== undefined ? 'cancelled' : this.clock.now() >= b.expiresAt ? 'expired' : 'completed';
      return this.finish(b, latest);
    }
  }

  /** Several daemons: the validated lines go to the database, where every daemon takes its share. */
  private async shareLines(id: string, path: string): Promise<void> {
    let chunk: { line: number; raw: string }[] = [];
    for await (const raw of jsonlLines(path)) {
      chunk.push({ line: raw.line, raw: raw.text ?? '' });
      if (chunk.length >= 500) {
        await this.store.shared!.addLines(id, chunk);
        chunk = [];
      }
    }
    if (chunk.length) await this.store.shared!.addLines(id, chunk);
  }

  /**
   * Several daemons: take lines a few at a time until none is left for anyone; true when the window
   * expired first. A cancel through another daemon is seen at the next take.
   */
  private async runClaimedLines(b: BatchRecord): Promise<boolean> {
    const shared = this.store.shared!;
    const inFlight = new Set<Promise<void>>();
    for (;;) {
      if (this.stopping || this.cancelRequested.has(b.id)) break;
      const now = this.clock.now();
      if (now >= b.expiresAt) {
        await Promise.allSettled([...inFlight]);
        return true;
      }
      const current = await this.store.get(b.id);
      if (!current || current.status !== 'in_progress') {
        if (current?.status === 'cancelling') this.cancelRequested.add(b.id);
        break;
      }
      const claimed = await shared.claim(b.id, this.daemonId, this.concurrency, now, now - CLAIM_STALE_MS);
      if (claimed.length === 0) break;
      for (const c of claimed) {
        const line = parseLine({ line: c.line, text: c.raw }, b.endpoint);
        if (!isBatchError(line)) await this.startLine(b, line, inFlight);
      }
    }
    await Promise.allSettled([...inFlight]);
    return false;
  }

  /** Runs every unrecorded line; true when the window expired first. */
  private async runLines(b: BatchRecord, path: string): Promise<boolean> {
    const recorded = await this.store.recordedLines(b.id);
    const inFlight = new Set<Promise<void>>();
    let expired = false;
    for await (const raw of jsonlLines(path)) {
      if (recorded.has(raw.line)) continue;
      if (this.stopping || this.cancelRequested.has(b.id)) break;
      if (this.clock.now() >= b.expiresAt) {
        expired = true;
        break;
      }
      const line = parseLine(raw, b.endpoint);
      if (isBatchError(line)) continue; // validated before: cannot happen unless the file changed
      await this.startLine(b, line, inFlight);
    }
    await Promise.allSettled([...inFlight]);
    return expired;
  }

  /** Waits for a free slot, then runs the line in the background (tracked in `inFlight`). */
  private async startLine(b: BatchRecord, line: BatchLine, inFlight: Set<Promise<void>>): Promise<void> {
    await this.slots.acquire();
    const p: Promise<void> = this.runLine(b, line).finally(() => {
      this.slots.release();
      inFlight.delete(p);
    });
    inFlight.add(p);
  }

  private async runLine(b: BatchRecord, line: BatchLine): Promise<void> {
    const requestId = `batch_req_${randomBytes(12).toString('hex')}`;
    const principal = this.principalOf(b.owner);
    let status: number;
    let body: unknown;
    let responseRequestId = requestId;
    if (typeof principal === 'string') {
      status = 401;
      body = { error: { message: principal, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } };
    } else {
      // A batch answers whole responses: streaming is turned off for every line.
      const { stream: _stream, stream_options: _options, ...request } = line.body;
      try {
        const res = await this.call!(principal, line.url, request, requestId);
        status = res.status;
        const rid = res.headers['x-gateway-request-id'];
        if (typeof rid === 'string') responseRequestId = rid;
        try {
          body = JSON.parse(res.body);
        } catch {
          body = res.body;
        }
      } catch (e) {
        status = 500;
        body = { error: { message: (e as Error).message, type: 'server_error', param: null, code: 'internal_error' } };
      }
    }
    const ok = status >= 200 && status < 300;
    const result = JSON.stringify({ id: requestId, custom_id: line.customId, response: { status_code: status, request_id: responseRequestId, body }, error: null });
    await this.store.record(b.id, { line: line.line, ok, result });
  }

  /** Lines the window left unrun go to the error file as batch_expired. */
  private async recordExpired(b: BatchRecord, path: string): Promise<void> {
    const recorded = await this.store.recordedLines(b.id);
    for await (const raw of jsonlLines(path)) {
      if (recorded.has(raw.line)) continue;
      const line = parseLine(raw, b.endpoint);
      if (isBatchError(line)) continue;
      const result = JSON.stringify({
        id: `batch_req_${randomBytes(12).toString('hex')}`,
        custom_id: line.customId,
        response: null,
        error: { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' },
      });
      await this.store.record(b.id, { line: line.line, ok: false, result });
    }
  }

  /** Writes the output and error files and ends the batch in `status`. */
  private async finish(b: BatchRecord, status: 'completed' | 'expired' | 'cancelled'): Promise<void> {
    const now = this.clock.now();
    await this.store.update(b.id, { status: 'finalizing', finalizingAt: b.finalizingAt ?? now });
    const output = await this.writeResults(b.id, true);
    const errors = await this.writeResults(b.id, false);
    const end = this.clock.now();
    const at = status === 'completed' ? { completedAt: end } : status === 'expired' ? { expiredAt: end } : { cancelledAt: end };
    const adopt = async (path: string, bytes: number, sha256: string, name: string) => (await this.files.adopt(path, { owner: b.owner, purpose: 'batch_output', filename: name, bytes, sha256 })).id;
    const outputFileId = output ? await adopt(output.path, output.bytes, output.sha256, `${b.id}_output.jsonl`) : undefined;
    const errorFileId = errors ? await adopt(errors.path, errors.bytes, errors.sha256, `${b.id}_error.jsonl`) : undefined;
    await this.store.update(b.id, { status, ...at, ...(outputFileId ? { outputFileId } : {}), ...(errorFileId ? { errorFileId } : {}) });
    this.cancelRequested.delete(b.id);
    await this.emit(status === 'completed' ? 'batch.completed' : status === 'expired' ? 'batch.expired' : 'batch.cancelled', b.id);
  }

  /** The recorded results of one kind as a JSONL temp file, or undefined when there are none. */
  private async writeResults(id: string, ok: boolean): Promise<{ path: string; bytes: number; sha256: string } | undefined> {
    const path = join(this.files.tmpDir, `.batch-${randomBytes(12).toString('hex')}`);
    mkdirSync(this.files.tmpDir, { recursive: true, mode: 0o700 });
    const out = createWriteStream(path, { mode: 0o600 });
    const hash = createHash('sha256');
    let bytes = 0;
    try {
      for await (const line of this.store.results(id, ok)) {
        const chunk = line + '\n';
        hash.update(chunk);
        bytes += Buffer.byteLength(chunk);
        if (!out.write(chunk)) await once(out, 'drain');
      }
      out.end();
      await once(out, 'finish');
    } catch (e) {
      out.destroy();
      await rm(path, { force: true });
      throw e;
    }
    if (bytes === 0) {
      await rm(path, { force: true });
      return undefined;
    }
    return { path, bytes, sha256: hash.digest('hex') };
  }
}
