import type { Reply } from './envelope.js';
import { ReplyError, reply } from './envelope.js';
import { Code } from './codes.js';
import type { Call, Services } from './service.js';
import { StorageUnavailable } from '../store/unavailable.js';
export { authenticate } from './auth.js';
import { auth, genid, logout } from './methods/account.js';
import { addnodes, getmynodes, rmnodes, rmnodesbyip } from './methods/nodes.js';
import { getdaemon, getfullstack, getmywallets, getnetstatus, getnodeipbypublickey, getprices, savemysettings } from './methods/info.js';
import { getnodedetails } from './methods/details.js';
import { getlanguage } from './methods/language.js';

export interface MethodDef {
  /** Needs an account (Hash in Value over POST, an `auth`ed session over WebSocket). */
  auth: boolean;
  /** Successful replies are also pushed to every WebSocket session of the account. */
  fanout?: boolean;
  run(s: Services, c: Call): Reply | Promise<Reply>;
}

export const METHODS: Readonly<Record<string, MethodDef>> = {
  auth: { auth: false, run: auth },
  logout: { auth: true, run: logout },
  genid: { auth: false, run: genid },
  getlanguage: { auth: false, run: getlanguage },
  addnodes: { auth: true, fanout: true, run: addnodes },
  rmnodes: { auth: true, fanout: true, run: rmnodes },
  rmnodesbyip: { auth: true, fanout: true, run: rmnodesbyip },
  getmynodes: { auth: true, run: getmynodes },
  getnetstatus: { auth: true, run: getnetstatus },
  getmywallets: { auth: true, run: getmywallets },
  getprices: { auth: true, run: getprices },
  getdaemon: { auth: false, run: getdaemon },
  getfullstack: { auth: true, run: getfullstack },
  savemysettings: { auth: true, fanout: true, run: savemysettings },
  getnodedetails: { auth: true, run: getnodedetails },
  getnodeipbypublickey: { auth: false, run: getnodeipbypublickey },
};

export function isMethod(name: string): boolean {
  return Object.hasOwn(METHODS, name);
}

/** Replies to calls the shared database could not serve (POST answers them with HTTP 503). */
export const unavailableReplies = new WeakSet<Reply>();

/** The reply when the shared database is unreachable: code 1, as any database failure, at once. */
export function unavailableReply(method: string, e: StorageUnavailable): Reply {
  const r = reply(method, Code.SQL, null, e.message);
  unavailableReplies.add(r);
  return r;
}

/** Run a method; ReplyError becomes its reply, database failures code 1, anything else code 500. */
export async function runMethod(s: Services, c: Call): Promise<Reply> {
  const def = METHODS[c.method]!;
  try {
    return await def.run(s, c);
  } catch (e) {
    if (e instanceof ReplyError) return reply(c.method, e.code, e.value, e.message);
    if (e instanceof StorageUnavailable) return unavailableReply(c.method, e);
    const sqlite = (e as Error)?.name === 'SqliteError';
    s.log.error({ err: e, method: c.method }, 'node monitor method failed');
    return reply(c.method, sqlite ? Code.SQL : Code.INTERNAL);
  }
}

/** After a successful change, push the reply to the account's other sessions. */
export function fanout(s: Services, c: Call, r: Reply): void {
  if (!METHODS[c.method]?.fanout || c.accountId === undefined) return;
  if (r.Code !== Code.OK && r.Code !== Code.PARTIAL) return;
  s.hub.broadcast(c.accountId, r, c.peer);
}
