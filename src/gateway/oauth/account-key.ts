/**
 * Accounts of OAuth logins (`oauth:<provider>:<id>`): their key is the login's access token, which
 * only the daemon holding the sealed token knows (service.ts keeps it in memory). The account itself
 * is configuration like any other (shared by the daemons of a cluster); the token never is.
 */
import type { ProviderAccount } from '../types.js';

export const isOAuthAccount = (id: string): boolean => id.startsWith('oauth:');

/** Whether routing may use the account: enabled, and for an OAuth login, with its token held here. */
export const usableAccount = (a: ProviderAccount): boolean => a.enabled && !(isOAuthAccount(a.id) && a.apiKey === '');

/** The account as stored: an OAuth login's token is never written into the accounts. */
export const storedAccount = (a: ProviderAccount): ProviderAccount => (isOAuthAccount(a.id) && a.apiKey !== '' ? { ...a, apiKey: '' } : a);
