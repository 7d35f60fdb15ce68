/**
 * The Core API cluster (microcluster's bootstrap, tokens, join, members, remove, heartbeats) on
 * ctl's terms: there is no Raft database to replicate; every member keeps its own trust store of
 * the members (core.db), the join and removal are fanned out to the members, and heartbeats carry
 * each member's view so one that missed a change catches up. Shared application state lives in
 * the shared storage (ctl.yaml `storage:`), which a joining member is handed.
 *
 * Trust: members talk HTTPS on their cluster addresses; the server presents the cluster
 * certificate, the client its own server certificate, and a request is trusted when that client
 * certificate is a member's (by fingerprint).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Egress } from '../../egress/index.js';
import { HttpError } from '../../http/errors.js';
import type { Clock } from '../../http/clock.js';
import type { DaemonControl, KeyPair, StorageSettings } from '../daemon-control.js';
import type { SharedPostgres } from '../../store/postgres.js';
import { fingerprint, isCertificate, isMemberName } from './identity.js';
import { peerRequest, PinMismatch } from './client.js';
import type { ClusterStore, Member, Removal, TokenRecord } from './store.js';
import { adjustRoles, PENDING, SPARE, STANDBY, VOTER } from './roles.js';
import { decodeToken, encodeToken } from './token.js';

export interface ClusterDeps {
  store: ClusterStore;
  daemon: () => DaemonControl;
  egress: Egress;
  certificatesDir: string;
  clock: Clock;
  log: Logger;
  heartbeatMs: number;
}

/** A member as GET /core/1.0/cluster shows it. */
export interface MemberView {
  name: string;
  address: string;
  role: string;
  failure_domain: number;
  last_heartbeat: string;
  status: 'ONLINE' | 'UNREACHABLE' | 'PENDING';
  certificate_fingerprint: string;
  certificate: string;
}

/** What members tell each other about a member. */
interface MemberWire {
  name: string;
  address: string;
  certificate: string;
  failure_domain: number;
  role?: string;
  /** When the member that sent this learnt of it (ms since the epoch); newer than a removal of the same certificate, it wins. */
  joined_at?: number;
}

const ROLES = new Set([VOTER, STANDBY, SPARE, PENDING]);

/**
 * How long DELETE /core/1.0/cluster/{name} waits for the other members to forget the removed
 * one before it answers; a member that has not answered by then (frozen, down) learns of the
 * removal from heartbeats. The removed member itself is told without waiting.
 */
export const REMOVE_WAIT_MS = 2000;

/**
 * With `storage.postgres`, removals are also written to the shared database: a removed member that
 * comes back and reaches no member (all down or frozen) reads its removal there.
 */
export const CORE_SHARED_MIGRATIONS = [
  { version: 1, up: 'CREATE TABLE core_cluster_removed (fingerprint TEXT PRIMARY KEY, name TEXT NOT NULL, removed_at BIGINT NOT NULL)' },
];

/** A removal another member tells of, or undefined when a field is missing. */
function removalRecord(o: unknown): Removal | undefined {
  if (!o || typeof o !== 'object') return undefined;
  const { fingerprint: fp, name, removed_at } = o as Record<string, unknown>;
  if (typeof fp !== 'string' || !/^[0-9a-f]{64}$/.test(fp) || !isMemberName(name) || !Number.isSafeInteger(removed_at)) return undefined;
  return { fingerprint: fp, name, removed_at: removed_at as number };
}

const GO_ZERO_TIME = '0001-01-01T00:00:00Z';
const ADDRESS = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/;

function checkAddress(address: unknown): string {
  if (typeof address !== 'string' || !ADDRESS.test(address) || Number(ADDRESS.exec(address)![2]) > 65535 || Number(ADDRESS.exec(address)![2]) === 0) {
    throw new HttpError(400, `Invalid address ${JSON.stringify(address)}: want host:port with a port from 1 to 65535`);
  }
  return address;
}

function checkName(name: unknown): string {
  if (!isMemberName(name)) throw new HttpError(400, `Invalid member name ${JSON.stringify(name)}: want a host name (letters, digits, - and .)`);
  return name;
}

/** A token record from another member, or undefined when a field is missing. */
function tokenRecord(o: Record<string, unknown>): TokenRecord | undefined {
  const { name, secret, expires_at, created_at } = o;
  if (!isMemberName(name) || typeof secret !== 'string' || !/^[0-9a-f]{16,128}$/.test(secret)) return undefined;
  if (!Number.isSafeInteger(expires_at) || (expires_at as number) < 0 || !Number.isSafeInteger(created_at)) return undefined;
  return { name, secret, expires_at: expires_at as number, created_at: created_at as number };
}

function sameStorage(a: StorageSettings, b: StorageSettings): boolean {
  return (a.postgres ?? '') === (b.postgres ?? '') && (a.redis ?? '') === (b.redis ?? '');
}

export class ClusterService {
  private timer?: NodeJS.Timeout;
  private beating = false;
  /** When this member last decided the roles (as the member with the lowest name online); 0 = not since it started. */
  private rolesAt = 0;
  /** Shared databases the removals table was migrated in. */
  private readonly migrated = new WeakSet<SharedPostgres>();
  private checkingShared = false;

  constructor(private readonly d: ClusterDeps) {}

  private get daemon(): DaemonControl {
    return this.d.daemon();
  }

  private get crtPath(): string {
    return join(this.d.certificatesDir, 'cluster.crt');
  }

  private clusterPair(): KeyPair | undefined {
    const key = join(this.d.certificatesDir, 'cluster.key');
    if (!existsSync(this.crtPath) || !existsSync(key)) return undefined;
    return { cert: readFileSync(this.crtPath, 'utf8'), key: readFileSync(key, 'utf8') };
  }

  private writeClusterPair(p: KeyPair): void {
    writeFileSync(join(this.d.certificatesDir, 'cluster.key'), p.key, { mode: 0o600 });
    writeFileSync(this.crtPath, p.cert, { mode: 0o644 });
  }

  /** This daemon's own member row, once it bootstrapped or joined. */
  self(): Member | undefined {
    const name = this.daemon.getConfig().name;
    return this.d.store.member(name);
  }

  initialised(): boolean {
    return this.self() !== undefined && this.clusterPair() !== undefined;
  }

  /** Requests over TCP carrying a member's certificate. */
  trustedFingerprint(fp: string | undefined): boolean {
    return fp !== undefined && this.d.store.memberByFingerprint(fp) !== undefined;
  }

  /** A certificate whose member was removed (its heartbeats are answered 410, so it leaves). */
  removedFingerprint(fp: string | undefined): boolean {
    return fp !== undefined && this.d.store.wasRemoved(fp);
  }

  /** At start-up: an initialised member serves its cluster address again and resumes heartbeats. */
  async start(): Promise<void> {
    const self = this.self();
    const pair = this.clusterPair();
    if (!self || !pair) return;
    await this.daemon.initCluster({ name: self.name, address: self.address, tls: pair });
    this.startHeartbeats();
    // At once: a member removed while it was down learns of it from the first answers.
    void this.beat();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.rolesAt = 0;
  }

  private refuseIfInitialised(): void {
    if (this.initialised()) throw new HttpError(409, 'This daemon is already a cluster member');
  }

  async bootstrap(body: Record<string, unknown>): Promise<void> {
    this.refuseIfInitialised();
    const name = checkName(body.name ?? this.daemon.getConfig().name);
    const address = checkAddress(body.address);
    const server = await this.daemon.serverKeyPair();
    const cluster = await this.daemon.newKeyPair(name);
    this.writeClusterPair(cluster);
    const now = this.d.clock.now();
    this.d.store.putMember({
      name,
      address,
      certificate: server.cert,
      fingerprint: fingerprint(server.cert),
      role: VOTER,
      failure_domain: this.daemon.getConfig()['failure-domain'],
      joined_at: now,
      heartbeat: now,
    });
    try {
      await this.daemon.initCluster({ name, address, tls: cluster });
    } catch (e) {
      // Could not listen there: undo, so bootstrap can be tried again with another address.
      this.d.store.clear();
      rmSync(this.crtPath, { force: true });
      rmSync(join(this.d.certificatesDir, 'cluster.key'), { force: true });
      throw new HttpError(400, `Unable to bootstrap the cluster: ${(e as Error).message}`);
    }
    this.d.log.info({ name, address }, 'cluster bootstrapped');
    this.startHeartbeats();
  }

  /** POST /core/control/tokens: a join token for member `name`. `expireAfterNs` 0 = never. */
  async createToken(name: unknown, expireAfterNs: number): Promise<string> {
    const self = this.requireSelf();
    const n = checkName(name);
    if (this.d.store.member(n)) throw new HttpError(409, `A member named ${JSON.stringify(n)} already exists`);
    const now = this.d.clock.now();
    this.d.store.purgeTokens(now);
    const secret = randomBytes(32).toString('hex');
    const expires = expireAfterNs > 0 ? now + Math.ceil(expireAfterNs / 1e6) : 0;
    const record: TokenRecord = { name: n, secret, expires_at: expires, created_at: now };
    if (!this.d.store.addToken(record)) throw new HttpError(409, `A join token for ${JSON.stringify(n)} already exists`);
    // Every member holds the token, so any of them accepts it while this one is down (heartbeats
    // bring it to a member this misses).
    await this.fanOut(() => ({ method: 'POST', path: '/core/internal/tokens', body: record }));
    return this.encode(self, secret);
  }

  /** POST /core/internal/tokens from a member: a token it issued. */
  learnToken(body: Record<string, unknown>): void {
    const t = tokenRecord(body);
    if (!t) throw new HttpError(400, 'A token record wants name, secret, expires_at and created_at');
    this.d.store.learnToken(t);
  }

  /**
   * POST /core/internal/tokens/spend from a member: the token was used by the joiner with
   * certificate fingerprint `spent_by` (or revoked, `spent_by` ''). 409 when another joiner used it first.
   */
  spendToken(body: Record<string, unknown>): void {
    const { secret, name, spent_by: by } = body;
    if (typeof secret !== 'string' || !secret || typeof name !== 'string' || typeof by !== 'string') throw new HttpError(400, 'A spent token wants secret, name and spent_by');
    if (!this.d.store.spend(secret, name, by, this.d.clock.now())) throw new HttpError(409, `The join token for ${JSON.stringify(name)} was already used`);
  }

  private encode(self: Member, secret: string): string {
    const others = this.d.store.members().filter((m) => m.name !== self.name).map((m) => m.address);
    return encodeToken({ secret, fingerprint: fingerprint(this.clusterPair()!.cert), join_addresses: [self.address, ...others] });
  }

  tokens(): { name: string; token: string; expires_at: string }[] {
    const self = this.requireSelf();
    return this.d.store.tokens(this.d.clock.now()).map((t) => ({
      name: t.name,
      token: this.encode(self, t.secret),
      expires_at: t.expires_at > 0 ? new Date(t.expires_at).toISOString() : GO_ZERO_TIME,
    }));
  }

  async revokeToken(name: string): Promise<void> {
    const t = this.d.store.tokens(this.d.clock.now()).find((r) => r.name === name);
    if (!t) throw new HttpError(404, `No join token named ${JSON.stringify(name)}`);
    this.d.store.spend(t.secret, t.name, '', this.d.clock.now());
    await this.fanOut(() => ({ method: 'POST', path: '/core/internal/tokens/spend', body: { secret: t.secret, name: t.name, spent_by: '' } }));
  }

  private requireSelf(): Member {
    const self = this.self();
    if (!self || !this.clusterPair()) throw new HttpError(503, 'Daemon has not been initialized: bootstrap a cluster or join one first');
    return self;
  }

  /** POST /core/control with join_token: ask the members named in the token to let this daemon in. */
  async join(body: Record<string, unknown>): Promise<void> {
    this.refuseIfInitialised();
    if (typeof body.join_token !== 'string') throw new HttpError(400, 'join_token must be a string');
    const token = decodeToken(body.join_token);
    if (typeof token === 'string') throw new HttpError(400, token);
    const name = checkName(body.name ?? this.daemon.getConfig().name);
    const address = checkAddress(body.address);
    const server = await this.daemon.serverKeyPair();
    const request = {
      name,
      address,
      certificate: server.cert,
      secret: token.secret,
      failure_domain: this.daemon.getConfig()['failure-domain'],
      storage: this.daemon.storage(),
    };
    const reasons: string[] = [];
    let answer: { cluster_cert: string; cluster_key: string; cluster_members: MemberWire[]; storage: StorageSettings } | undefined;
    for (const at of token.join_addresses) {
      try {
        const r = await peerRequest(this.d.egress, { address: at, method: 'POST', path: '/core/internal/cluster', body: request, pin: token.fingerprint, identity: server });
        if (r.status === 200) {
          answer = r.metadata as typeof answer;
          break;
        }
        reasons.push(`${at}: ${r.error}`);
        // The member there refused it for a reason of its own (bad name, spent token): others would too.
        if (r.status !== 404 && r.status !== 503) break;
      } catch (e) {
        reasons.push(e instanceof PinMismatch ? e.message : (e as Error).message);
      }
    }
    if (!answer) throw new HttpError(400, `Unable to join the cluster: ${reasons.join('; ')}`);
    if (!isCertificate(answer.cluster_cert) || typeof answer.cluster_key !== 'string' || fingerprint(answer.cluster_cert) !== token.fingerprint) {
      throw new HttpError(502, 'Unable to join the cluster: the member answered with a cluster certificate other than the token names');
    }
    this.writeClusterPair({ cert: answer.cluster_cert, key: answer.cluster_key });
    const now = this.d.clock.now();
    for (const m of answer.cluster_members ?? []) this.adopt(m, m.name === name ? now : 0);
    this.d.store.putMember({ name, address, certificate: server.cert, fingerprint: fingerprint(server.cert), role: PENDING, failure_domain: request.failure_domain, joined_at: now, heartbeat: now });
    await this.daemon.initCluster({ name, address, tls: { cert: answer.cluster_cert, key: answer.cluster_key } });
    this.d.log.info({ name, address, members: (answer.cluster_members ?? []).length }, 'joined the cluster');
    const storage = answer.storage ?? {};
    if ((storage.postgres || storage.redis) && !sameStorage(storage, this.daemon.storage())) await this.daemon.adoptStorage(storage);
    this.startHeartbeats();
    void this.beat();
  }

  /** A member row from another member (heartbeat or join answer); never one removed since it joined. */
  private adopt(m: MemberWire, heartbeat: number): void {
    if (!isMemberName(m.name) || typeof m.address !== 'string' || !isCertificate(m.certificate)) return;
    const fp = fingerprint(m.certificate);
    const removal = this.d.store.removal(fp);
    if (removal && !(Number.isSafeInteger(m.joined_at) && m.joined_at! > removal.removed_at)) return;
    const known = this.d.store.member(m.name);
    this.d.store.putMember({
      name: m.name,
      address: m.address,
      certificate: m.certificate,
      fingerprint: fp,
      role: typeof m.role === 'string' && ROLES.has(m.role) ? m.role : (known?.role ?? PENDING),
      failure_domain: Number.isInteger(m.failure_domain) ? m.failure_domain : (known?.failure_domain ?? 0),
      joined_at: known?.joined_at ?? this.d.clock.now(),
      heartbeat: Math.max(heartbeat, known?.heartbeat ?? 0),
    });
  }

  private wire(m: Member): MemberWire {
    return { name: m.name, address: m.address, certificate: m.certificate, failure_domain: m.failure_domain, role: m.role, joined_at: m.joined_at };
  }

  /** POST /core/internal/cluster: a daemon with a token asks to join; `peerFp` is its TLS client certificate's. */
  async acceptJoin(body: Record<string, unknown>, peerFp: string | undefined): Promise<unknown> {
    const self = this.requireSelf();
    const now = this.d.clock.now();
    this.d.store.purgeTokens(now);
    const token = typeof body.secret === 'string' ? this.d.store.token(body.secret) : undefined;
    // 404: another member may hold the token (the joiner tries the next address).
    if (!token) throw new HttpError(404, 'Join token not found on this member (revoked, spent, expired or issued by another member)');
    const name = checkName(body.name);
    const address = checkAddress(body.address);
    if (name !== token.name) throw new HttpError(403, `The join token is for ${JSON.stringify(token.name)}, not ${JSON.stringify(name)}`);
    if (!isCertificate(body.certificate)) throw new HttpError(400, 'certificate must be a PEM certificate');
    const fp = fingerprint(body.certificate);
    if (peerFp !== fp) throw new HttpError(403, 'The joining daemon must present the certificate it joins with as its TLS client certificate');
    if (this.d.store.member(name)) throw new HttpError(409, `A member named ${JSON.stringify(name)} already exists`);
    const storage = (body.storage ?? {}) as StorageSettings;
    const ours = this.daemon.storage();
    if ((storage.postgres || storage.redis) && !sameStorage(storage, ours)) {
      throw new HttpError(400, 'The joining daemon has other storage settings than the cluster (ctl.yaml storage:); remove them there, it is handed the cluster\'s');
    }
    const member: Member = {
      name,
      address,
      certificate: body.certificate,
      fingerprint: fp,
      role: 'PENDING',
      failure_domain: Number.isInteger(body.failure_domain) ? (body.failure_domain as number) : 0,
      joined_at: now,
      heartbeat: 0,
    };
    // Spent once cluster-wide: here first, then on every member that answers; a member that saw
    // another joiner use it first refuses, and so does this one.
    if (!this.d.store.spend(token.secret, token.name, fp, now)) throw new HttpError(409, `The join token for ${JSON.stringify(token.name)} was already used`);
    const refusals: string[] = [];
    await this.fanOut(
      () => ({ method: 'POST', path: '/core/internal/tokens/spend', body: { secret: token.secret, name: token.name, spent_by: fp } }),
      [],
      (m, status) => {
        if (status === 409) refusals.push(m.name);
      },
    );
    if (refusals.length > 0) throw new HttpError(409, `The join token for ${JSON.stringify(token.name)} was already used (through ${refusals.join(', ')})`);
    this.d.store.putMember(member);
    void this.forgetRemoval(fp, now);
    await this.fanOut((m) => ({ method: 'POST', path: '/core/internal/truststore', body: this.wire(member), skip: m.name === name }));
    this.d.log.info({ name, address }, 'a member joined the cluster');
    const pair = this.clusterPair()!;
    return { cluster_cert: pair.cert, cluster_key: pair.key, cluster_members: this.d.store.members().map((m) => this.wire(m)), storage: ours, trusted_member: this.wire(self) };
  }

  /** POST /core/internal/truststore from a member: trust a new member. */
  trust(body: Record<string, unknown>): void {
    if (!isCertificate(body.certificate)) throw new HttpError(400, 'certificate must be a PEM certificate');
    const m = body as unknown as MemberWire;
    checkName(m.name);
    checkAddress(m.address);
    // An explicit addition from a member overrides an earlier removal of the same certificate.
    const known = this.d.store.member(m.name);
    this.d.store.putMember({
      name: m.name,
      address: m.address,
      certificate: m.certificate,
      fingerprint: fingerprint(m.certificate),
      role: typeof m.role === 'string' && ROLES.has(m.role) ? m.role : (known?.role ?? PENDING),
      failure_domain: Number.isInteger(m.failure_domain) ? m.failure_domain : 0,
      joined_at: known?.joined_at ?? this.d.clock.now(),
      heartbeat: known?.heartbeat ?? 0,
    });
  }

  /** DELETE /core/internal/truststore/{name} from a member: stop trusting a removed member. */
  distrust(name: string): void {
    const self = this.self();
    if (self && name === self.name) return void this.leave();
    this.d.store.removeMember(name, this.d.clock.now());
  }

  /**
   * DELETE /core/1.0/cluster/{name}: remove a member; every member forgets it and it leaves.
   * Answers within REMOVE_WAIT_MS whatever the members do: the removed member is told without
   * waiting for it, and a member that missed the removal (down, frozen) hears of it from the
   * heartbeats, which carry every removal; a removed member that comes back has its heartbeats
   * answered 410 and leaves.
   */
  async remove(name: string): Promise<void> {
    const self = this.requireSelf();
    if (name === self.name) throw new HttpError(400, 'A member cannot remove itself: remove it from another member');
    const gone = this.d.store.removeMember(name, this.d.clock.now());
    if (!gone) throw new HttpError(404, `No cluster member named ${JSON.stringify(name)}`);
    const req = () => ({ method: 'DELETE', path: `/core/internal/truststore/${encodeURIComponent(name)}` });
    void this.fanOut(req, [gone], undefined, [gone]).catch(() => undefined);
    const others = Promise.all([this.fanOut(req), this.recordRemoval(gone)]);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([others, new Promise<void>((r) => (timer = setTimeout(r, REMOVE_WAIT_MS)))]);
    clearTimeout(timer);
    this.d.log.info({ name }, 'member removed from the cluster');
    this.decideRoles();
  }

  /** This daemon was removed: forget the cluster, stop serving the cluster address. Data and storage settings stay. */
  async leave(): Promise<void> {
    if (!this.self()) return;
    this.stop();
    this.d.store.clear();
    rmSync(this.crtPath, { force: true });
    rmSync(join(this.d.certificatesDir, 'cluster.key'), { force: true });
    await this.daemon.leaveCluster();
    this.d.log.warn('this daemon was removed from the cluster');
  }

  /** Send a request to every other member (and `extra`), in parallel; failures are logged, not thrown. */
  private async fanOut(
    req: (m: Member) => { method: string; path: string; body?: unknown; skip?: boolean },
    extra: Member[] = [],
    answered?: (m: Member, status: number) => void,
    only?: Member[],
  ): Promise<void> {
    const self = this.self();
    const pair = this.clusterPair();
    if (!self || !pair) return;
    const identity = await this.daemon.serverKeyPair();
    const pin = fingerprint(pair.cert);
    const targets = only ?? [...this.d.store.members().filter((m) => m.name !== self.name), ...extra];
    await Promise.all(
      targets.map(async (m) => {
        const r = req(m);
        if (r.skip) return;
        try {
          const reply = await peerRequest(this.d.egress, { address: m.address, method: r.method, path: r.path, body: r.body, pin, identity });
          answered?.(m, reply.status);
          if (reply.status !== 200) this.d.log.warn({ member: m.name, status: reply.status, err: reply.error }, `cluster: ${r.method} ${r.path} refused by ${m.name}`);
        } catch (e) {
          this.d.log.warn({ member: m.name, err: (e as Error).message }, `cluster: ${m.name} unreachable for ${r.method} ${r.path}`);
        }
      }),
    );
  }

  private startHeartbeats(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.beat(), this.d.heartbeatMs);
    this.timer.unref();
  }

  /** One round: tell every other member this member's view; each answer counts as its heartbeat. */
  private async beat(): Promise<void> {
    if (this.beating) return;
    const self = this.self();
    const pair = this.clusterPair();
    if (!self || !pair) return;
    this.beating = true;
    try {
      const now = this.d.clock.now();
      this.d.store.heartbeat(self.name, now, this.daemon.getConfig()['failure-domain']);
      void this.checkSharedRemovals();
      const identity = await this.daemon.serverKeyPair();
      const pin = fingerprint(pair.cert);
      const members = this.d.store.members();
      // Roles go out only when this member decided them after its last round (not stale ones
      // from before it was stopped or frozen).
      const decided = this.coordinator() === self.name && this.decisionFresh(now);
      const timeoutMs = this.heartbeatTimeoutMs();
      const body = {
        name: self.name,
        failure_domain: this.daemon.getConfig()['failure-domain'],
        members: members.map((m) => this.wire(m)),
        tokens: this.d.store.tokens(now),
        spent_tokens: this.d.store.spentTokens(),
        removed: this.d.store.removals(),
        ...(decided ? { roles: Object.fromEntries(members.map((m) => [m.name, m.role])) } : {}),
      };
      let heard = 0;
      let removed = 0;
      await Promise.all(
        members
          .filter((m) => m.name !== self.name)
          .map(async (m) => {
            try {
              const r = await peerRequest(this.d.egress, { address: m.address, method: 'POST', path: '/core/internal/heartbeat', body, pin, identity, timeoutMs });
              if (r.status === 200) {
                heard++;
                const reply = r.metadata as { failure_domain?: number; removed?: unknown } | undefined;
                this.d.store.heartbeat(m.name, this.d.clock.now(), Number.isInteger(reply?.failure_domain) ? reply!.failure_domain : undefined);
                this.learnRemovals(reply?.removed);
              } else if (r.status === 410) removed++;
            } catch {
              /* unreachable: its last heartbeat ages, and the member list shows it */
            }
          }),
      );
      // Every member that answered says this one was removed (while it was down or frozen).
      // One that still trusts it (it missed the removal too) holds it back until it hears.
      if (removed > 0 && heard === 0 && this.self()) {
        this.d.log.warn({ members: removed }, 'the cluster members answer that this member was removed');
        await this.leave();
        return;
      }
      this.decideRoles();
    } finally {
      this.beating = false;
    }
  }

  private heartbeatTimeoutMs(): number {
    return Math.max(1000, Math.min(2 * this.d.heartbeatMs, 10_000));
  }

  /** Whether this member decided the roles after its last heartbeat round. */
  private decisionFresh(now: number): boolean {
    return this.rolesAt > 0 && now - this.rolesAt <= 2 * this.d.heartbeatMs + this.heartbeatTimeoutMs();
  }

  /** Whether a member is heard from recently enough to count as ONLINE. */
  private online(m: Member, now: number, selfName: string): boolean {
    return m.name === selfName || (m.heartbeat > 0 && now - m.heartbeat <= 3 * this.d.heartbeatMs);
  }

  /** The member that decides roles, as this member sees it: the lowest name among those online. */
  private coordinator(): string | undefined {
    const self = this.self();
    if (!self) return undefined;
    const now = this.d.clock.now();
    return this.d.store
      .members()
      .filter((m) => this.online(m, now, self.name))
      .map((m) => m.name)
      .sort()[0];
  }

  /** As the coordinator: set every member's role (microcluster's voter / stand-by / spare). */
  private decideRoles(): void {
    const self = this.self();
    if (!self || this.coordinator() !== self.name) return;
    const now = this.d.clock.now();
    const members = this.d.store.members();
    const roles = adjustRoles(
      members.map((m) => ({ name: m.name, role: m.role, online: this.online(m, now, self.name), failure_domain: m.name === self.name ? this.daemon.getConfig()['failure-domain'] : m.failure_domain })),
      self.name,
    );
    for (const m of members) {
      const role = roles.get(m.name)!;
      if (role !== m.role) {
        this.d.store.setRole(m.name, role);
        this.d.log.info({ member: m.name, from: m.role, to: role }, 'cluster: role changed');
      }
    }
    this.rolesAt = now;
  }

  /** Removals another member tells of: drop those members (unless they joined again since). */
  private learnRemovals(list: unknown): void {
    const self = this.self();
    if (!Array.isArray(list) || !self) return;
    for (const o of list) {
      const r = removalRecord(o);
      if (!r) continue;
      const m = this.d.store.memberByFingerprint(r.fingerprint);
      if (!m) {
        this.d.store.noteRemoval(r);
        continue;
      }
      // This member's own removal is for the members to answer (410 to its heartbeats).
      if (m.name === self?.name || r.removed_at <= m.joined_at) continue;
      this.d.store.removeMember(m.name, r.removed_at);
      this.d.log.info({ name: m.name }, 'member removed from the cluster (heard from a member)');
    }
  }

  /** The shared database (`storage.postgres`) with the removals table, or undefined without one. */
  private async sharedDb(): Promise<SharedPostgres | undefined> {
    const pg = this.daemon.sharedPostgres?.();
    if (!pg) return undefined;
    if (!this.migrated.has(pg)) {
      await pg.migrate('core', CORE_SHARED_MIGRATIONS);
      this.migrated.add(pg);
    }
    return pg;
  }

  /** Write a removal to the shared database, if there is one (failures logged: heartbeats carry it anyway). */
  private async recordRemoval(m: Member): Promise<void> {
    try {
      const pg = await this.sharedDb();
      await pg?.command(
        'INSERT INTO core_cluster_removed (fingerprint, name, removed_at) VALUES ($1, $2, $3) ON CONFLICT (fingerprint) DO UPDATE SET name = EXCLUDED.name, removed_at = EXCLUDED.removed_at',
        [m.fingerprint, m.name, this.d.store.removal(m.fingerprint)?.removed_at ?? this.d.clock.now()],
      );
    } catch (e) {
      this.d.log.warn({ member: m.name, err: (e as Error).message }, 'cluster: could not write the removal to the shared database');
    }
  }

  /** A member joins (again): its certificate's old removal in the shared database goes. */
  private async forgetRemoval(fp: string, before: number): Promise<void> {
    try {
      await (await this.sharedDb())?.command('DELETE FROM core_cluster_removed WHERE fingerprint = $1 AND removed_at < $2', [fp, before]);
    } catch (e) {
      this.d.log.warn({ err: (e as Error).message }, 'cluster: could not clear an old removal in the shared database');
    }
  }

  /**
   * Each heartbeat round, beside it (a stalled database never holds heartbeats up): read the
   * removals in the shared database; this member's own, newer than its join, makes it leave.
   */
  private async checkSharedRemovals(): Promise<void> {
    if (this.checkingShared) return;
    this.checkingShared = true;
    try {
      const pg = await this.sharedDb();
      if (!pg) return;
      const rows = await pg.query<Removal>('SELECT fingerprint, name, removed_at FROM core_cluster_removed');
      const self = this.self();
      if (!self) return;
      const own = rows.find((r) => r.fingerprint === self.fingerprint);
      if (own && Number(own.removed_at) > self.joined_at) {
        this.d.log.warn('the shared database records that this member was removed');
        await this.leave();
        return;
      }
      this.learnRemovals(rows);
    } catch (e) {
      this.d.log.debug({ err: (e as Error).message }, 'cluster: could not read removals from the shared database');
    } finally {
      this.checkingShared = false;
    }
  }

  /** POST /core/internal/heartbeat from member `fromFp`: note it, learn members it knows. */
  receiveHeartbeat(body: Record<string, unknown>, fromFp: string): unknown {
    const from = this.d.store.memberByFingerprint(fromFp)!;
    const fd = Number.isInteger(body.failure_domain) ? (body.failure_domain as number) : undefined;
    this.d.store.heartbeat(from.name, this.d.clock.now(), fd);
    const self = this.self();
    this.learnRemovals(body.removed);
    if (Array.isArray(body.members)) {
      for (const m of body.members as MemberWire[]) {
        if (!m || typeof m !== 'object' || m.name === self?.name || this.d.store.member(m.name)) continue;
        this.adopt({ ...m, role: PENDING }, 0);
      }
    }
    // Roles from the member this one sees as deciding them; or, when this one should decide but
    // has not since it started or was frozen, from the member that decided meanwhile (so the
    // roles it gave are kept, as a new dqlite leader keeps them).
    const coordinator = this.coordinator();
    const adopt = coordinator === from.name || (coordinator === self?.name && !this.decisionFresh(this.d.clock.now()));
    if (body.roles && typeof body.roles === 'object' && !Array.isArray(body.roles) && adopt) {
      for (const [name, role] of Object.entries(body.roles as Record<string, unknown>)) {
        if (typeof role === 'string' && ROLES.has(role) && this.d.store.member(name)) this.d.store.setRole(name, role);
      }
    }
    this.learnTokens(body);
    return { name: self?.name, failure_domain: this.daemon.getConfig()['failure-domain'], removed: this.d.store.removals() };
  }

  /** Tokens and spent tokens a heartbeat carries: a member that missed a fan-out catches up. */
  private learnTokens(body: Record<string, unknown>): void {
    const now = this.d.clock.now();
    if (Array.isArray(body.spent_tokens)) {
      for (const s of body.spent_tokens as Record<string, unknown>[]) {
        if (s && typeof s.secret === 'string' && typeof s.name === 'string' && typeof s.spent_by === 'string') this.d.store.spend(s.secret, s.name, s.spent_by, now);
      }
    }
    if (Array.isArray(body.tokens)) {
      for (const o of body.tokens as Record<string, unknown>[]) {
        const t = o && typeof o === 'object' ? tokenRecord(o) : undefined;
        if (t && (t.expires_at === 0 || t.expires_at > now)) this.d.store.learnToken(t);
      }
    }
  }

  /** GET /core/1.0/cluster. */
  members(): MemberView[] {
    const self = this.requireSelf();
    const now = this.d.clock.now();
    const fresh = 3 * this.d.heartbeatMs;
    return this.d.store.members().map((m) => {
      const heartbeat = m.name === self.name ? now : m.heartbeat;
      const status: MemberView['status'] = m.name === self.name ? 'ONLINE' : m.heartbeat === 0 ? 'PENDING' : now - m.heartbeat <= fresh ? 'ONLINE' : 'UNREACHABLE';
      return {
        name: m.name,
        address: m.address,
        role: m.role,
        failure_domain: m.name === self.name ? this.daemon.getConfig()['failure-domain'] : m.failure_domain,
        last_heartbeat: heartbeat > 0 ? new Date(heartbeat).toISOString() : GO_ZERO_TIME,
        status,
        certificate_fingerprint: m.fingerprint,
        certificate: m.certificate,
      };
    });
  }
}
