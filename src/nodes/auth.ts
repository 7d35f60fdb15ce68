import { Code } from './codes.js';
import { reply, type Reply } from './envelope.js';
import type { Services } from './service.js';

/**
 * Resolve `Hash` to an account for a POST call. Replies as the origin does: a missing Hash → 253
 * with an empty Method; a bad length → 254 and an unknown ID → 255, both with Method `auth`.
 */
export async function authenticate(s: Services, hash: unknown): Promise<number | Reply> {
  if (typeof hash !== 'string') return reply('', Code.NO_AUTH);
  return lookupAccount(s, hash, 'auth');
}

export async function lookupAccount(s: Services, hash: string, method: string): Promise<number | Reply> {
  if (hash.length !== 64) return reply(method, Code.BAD_ID_LENGTH);
  const id = await s.store.accountId(hash);
  return id === undefined ? reply(method, Code.ID_NOT_FOUND) : id;
}
