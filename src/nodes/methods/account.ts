import { createHash, randomBytes } from 'node:crypto';
import { Code } from '../codes.js';
import { ok, reply, type Reply } from '../envelope.js';
import type { Call, Services } from '../service.js';
import { lookupAccount } from '../auth.js';

/** A new account ID: lowercase hex SHA-256 of 4 KiB of random bytes. At most N per client per window (252). */
export async function genid(s: Services, c: Call): Promise<Reply> {
  const now = s.clock.now();
  const { limit, window } = s.config.genid;
  if ((await s.store.countAccountsSince(c.client, now - window * 1000)) >= limit) return reply(c.method, Code.GENID_LIMIT);
  let hash: string;
  try {
    hash = createHash('sha256').update(randomBytes(4096)).digest('hex');
  } catch {
    return reply(c.method, Code.GENID_FAILED);
  }
  await s.store.createAccount(hash, c.client, now);
  return ok(c.method, { Hash: hash });
}

/** Bind the WebSocket session to an account (over POST it only checks the ID). */
export async function auth(s: Services, c: Call): Promise<Reply> {
  const hash = c.value.Hash;
  if (typeof hash !== 'string') return reply(c.method, Code.INCORRECT_QUERY);
  const id = await lookupAccount(s, hash, c.method);
  if (typeof id !== 'number') return id;
  if (c.peer) s.hub.bind(c.peer, id);
  return ok(c.method, { Hash: hash });
}

export function logout(s: Services, c: Call): Reply {
  if (c.peer) s.hub.unbind(c.peer);
  return ok(c.method, null);
}
