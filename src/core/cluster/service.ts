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
import { fingerprint, isCertificate, isMemberName } from './identity.js';
import { peerRequest, PinMismatch } from './client.js';
import type { ClusterStore, Member, TokenRecord } from './store.js';
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

  /** At start-up: an initialised member serves its cluster address again and resumes heartbeats. */
  async start(): Promise<void> {
    const self = this.self();
    const pair = this.clusterPair();
    if (!self || !pair) return;
    await this.daemon.initCluster({ name: self.name, address: self.address, tls: pair });
    this.startHeartbeats();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
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
      role: 'member',
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
    this.d.store.putMember({ name, address, certificate: server.cert, fingerprint: fingerprint(server.cert), role: 'member', failure_domain: request.failure_domain, joined_at: now, heartbeat: now });
    await this.daemon.initCluster({ name, address, tls: { cert: answer.cluster_cert, key: answer.cluster_key } });
    this.d.log.info({ name, address, members: (answer.cluster_members ?? []).length }, 'joined the cluster');
    const storage = answer.storage ?? {};
    if ((storage.postgres || storage.redis) && !sameStorage(storage, this.daemon.storage())) await this.daemon.adoptStorage(storage);
    this.startHeartbeats();
    void this.beat();
  }

  /** A member row from another member (heartbeat or join answer); never one this daemon removed. */
  private adopt(m: MemberWire, heartbeat: number): void {
    if (!isMemberName(m.name) || typeof m.address !== 'string' || !isCertificate(m.certificate)) return;
    const fp = fingerprint(m.certificate);
    if (this.d.store.wasRemoved(fp)) return;
    const known = this.d.store.member(m.name);
    this.d.store.putMember({
      name: m.name,
      address: m.address,
      certificate: m.certificate,
      fingerprint: fp,
      role: m.role ?? known?.role ?? 'PENDING',
      failure_domain: Number.isInteger(m.failure_domain) ? m.failure_domain : (known?.failure_domain ?? 0),
      joined_at: known?.joined_at ?? this.d.clock.now(),
      heartbeat: Math.max(heartbeat, known?.heartbeat ?? 0),
    });
  }

  private wire(m: Member): MemberWire {
    return { name: m.name, address: m.address, certificate: m.certificate, failure_domain: m.failure_domain, role: m.role };
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
      role: m.role ?? 'PENDING',
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

  /** DELETE /core/1.0/cluster/{name}: remove a member; every member forgets it and it leaves. */
  async remove(name: string): Promise<void> {
    const self = this.requireSelf();
    if (name === self.name) throw new HttpError(400, 'A member cannot remove itself: remove it from another member');
    const gone = this.d.store.removeMember(name, this.d.clock.now());
    if (!gone) throw new HttpError(404, `No cluster member named ${JSON.stringify(name)}`);
    await this.fanOut(() => ({ method: 'DELETE', path: `/core/internal/truststore/${encodeURIComponent(name)}` }), [gone]);
    this.d.log.info({ name }, 'member removed from the cluster');
  }

  /** This daemon was removed: forget the cluster, stop serving the cluster address. Data and storage settings stay. */
  async leave(): Promise<void> {
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
  ): Promise<void> {
    const self = this.self();
    const pair = this.clusterPair();
    if (!self || !pair) return;
    const identity = await this.daemon.serverKeyPair();
    const pin = fingerprint(pair.cert);
    const targets = [...this.d.store.members().filter((m) => m.name !== self.name), ...extra];
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
      this.d.store.heartbeat(self.name, now, this.daemon.getConfig()['failure-domain'], 'member');
      const identity = await this.daemon.serverKeyPair();
      const pin = fingerprint(pair.cert);
      const body = {
        name: self.name,
        failure_domain: this.daemon.getConfig()['failure-domain'],
        members: this.d.store.members().map((m) => this.wire(m)),
        tokens: this.d.store.tokens(now),
        spent_tokens: this.d.store.spentTokens(),
      };
      const timeoutMs = Math.max(1000, Math.min(2 * this.d.heartbeatMs, 10_000));
      await Promise.all(
        this.d.store
          .members()
          .filter((m) => m.name !== self.name)
          .map(async (m) => {
            try {
              const r = await peerRequest(this.d.egress, { address: m.address, method: 'POST', path: '/core/internal/heartbeat', body, pin, identity, timeoutMs });
              if (r.status === 200) {
                const reply = r.metadata as { failure_domain?: number } | undefined;
                this.d.store.heartbeat(m.name, this.d.clock.now(), Number.isInteger(reply?.failure_domain) ? reply!.failure_domain : undefined, 'member');
              }
            } catch {
              /* unreachable: its last heartbeat ages, and the member list shows it */
            }
          }),
      );
    } finally {
      this.beating = false;
    }
  }

  /** POST /core/internal/heartbeat from member `fromFp`: note it, learn members it knows. */
  receiveHeartbeat(body: Record<string, unknown>, fromFp: string): unknown {
    const from = this.d.store.memberByFingerprint(fromFp)!;
    const fd = Number.isInteger(body.failure_domain) ? (body.failure_domain as number) : undefined;
    this.d.store.heartbeat(from.name, this.d.clock.now(), fd, 'member');
    const self = this.self();
    if (Array.isArray(body.members)) {
      for (const m of body.members as MemberWire[]) {
        if (!m || typeof m !== 'object' || m.name === self?.name || this.d.store.member(m.name)) continue;
        this.adopt({ ...m, role: 'PENDING' }, 0);
      }
    }
    this.learnTokens(body);
    return { name: self?.name, failure_domain: this.daemon.getConfig()['failure-domain'] };
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
