/**
 * Member roles as microcluster shows them (dqlite's automatic role management): up to three
 * voters and three stand-bys, the rest spares. A member that went offline is demoted to spare;
 * when there are fewer online voters than wanted, online stand-bys and spares are promoted (those
 * whose failure domain is rarest among the voters first, then stand-bys before spares, then by
 * name); when there are too many, voters are demoted (never the member deciding). Stand-bys are
 * filled from online spares the same way. A member never heard from yet stays PENDING.
 *
 * ctl has no Raft leader: the member with the lowest name among those it sees online decides the
 * roles (see ClusterService) and sends them with its heartbeats.
 */

export const VOTER = 'voter';
export const STANDBY = 'stand-by';
export const SPARE = 'spare';
export const PENDING = 'PENDING';

/** How many voters and stand-bys the cluster keeps (microcluster's defaults). */
export const ROLE_TARGETS = { voters: 3, standbys: 3 } as const;

export interface RoleInput {
  name: string;
  role: string;
  online: boolean;
  failure_domain: number;
}

/** Order in which `candidates` are promoted into a group whose failure domains are counted in `domains`. */
function promotionOrder(candidates: RoleInput[], domains: Map<number, number>): RoleInput[] {
  const seniority = (r: string) => (r === STANDBY ? 0 : 1);
  return [...candidates].sort(
    (l, r) =>
      (domains.get(l.failure_domain) ?? 0) - (domains.get(r.failure_domain) ?? 0) ||
      seniority(l.role) - seniority(r.role) ||
      (l.name < r.name ? -1 : l.name > r.name ? 1 : 0),
  );
}

const count = (domains: Map<number, number>, fd: number, by: number) => domains.set(fd, (domains.get(fd) ?? 0) + by);

/** The roles `members` should have, decided by member `self`. Pure: the same input gives the same answer. */
export function adjustRoles(members: RoleInput[], self: string, targets: { voters: number; standbys: number } = ROLE_TARGETS): Map<string, string> {
  const ms = members.map((m) => ({ ...m }));
  const voterDomains = new Map<number, number>();
  const standbyDomains = new Map<number, number>();
  for (const m of ms) {
    if (!m.online) {
      if (m.role !== PENDING) m.role = SPARE;
    } else if (m.role === VOTER) count(voterDomains, m.failure_domain, 1);
    else if (m.role === STANDBY) count(standbyDomains, m.failure_domain, 1);
    else m.role = SPARE; // PENDING now heard from, or a role this version does not know
  }
  const of = (role: string) => ms.filter((m) => m.online && m.role === role);

  let voters = of(VOTER).length;
  for (const m of promotionOrder(ms.filter((x) => x.online && x.role !== VOTER), voterDomains)) {
    if (voters >= targets.voters) break;
    if (m.role === STANDBY) count(standbyDomains, m.failure_domain, -1);
    m.role = VOTER;
    count(voterDomains, m.failure_domain, 1);
    voters++;
  }
  for (const m of promotionOrder(of(VOTER), voterDomains).reverse()) {
    if (voters <= targets.voters) break;
    if (m.name === self) continue;
    m.role = SPARE;
    count(voterDomains, m.failure_domain, -1);
    voters--;
  }

  let standbys = of(STANDBY).length;
  for (const m of promotionOrder(of(SPARE), standbyDomains)) {
    if (standbys >= targets.standbys) break;
    m.role = STANDBY;
    count(standbyDomains, m.failure_domain, 1);
    standbys++;
  }
  for (const m of promotionOrder(of(STANDBY), standbyDomains).reverse()) {
    if (standbys <= targets.standbys) break;
    m.role = SPARE;
    count(standbyDomains, m.failure_domain, -1);
    standbys--;
  }
  return new Map(ms.map((m) => [m.name, m.role]));
}
