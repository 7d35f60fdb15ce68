/**
 * The gateway's general settings (`/api/settings`): defaults < gateway.yaml `settings:` < the API.
 *
 *   requireLogin    management over TCP needs a login or a management key (default true; false
 *                   opens the management API on the gateway's TCP listener to anyone who reaches it)
 *   mcpEnabled, a2aEnabled   the agent protocols (default off)
 *   systemPrompt    {enabled, prompt, position: prepend | append}: added to every chat request
 *   thinkingBudget  {mode: passthrough | fixed | cap, tokens}: applied to requests that ask for reasoning
 *   ipFilter        {enabled, allow: [CIDR], deny: [CIDR]}: who may use the gateway's TCP listener
 */
import { Type } from '@sinclair/typebox';
import { BlockList, isIP } from 'node:net';
import { compile } from '../../http/schema.js';

export interface GeneralSettings {
  requireLogin: boolean;
  mcpEnabled: boolean;
  a2aEnabled: boolean;
  systemPrompt: { enabled: boolean; prompt: string; position: 'prepend' | 'append' };
  thinkingBudget: { mode: 'passthrough' | 'fixed' | 'cap'; tokens: number };
  ipFilter: { enabled: boolean; allow: string[]; deny: string[] };
}

export const DEFAULT_GENERAL: GeneralSettings = {
  requireLogin: true,
  mcpEnabled: false,
  a2aEnabled: false,
  systemPrompt: { enabled: false, prompt: '', position: 'prepend' },
  thinkingBudget: { mode: 'passthrough', tokens: 8192 },
  ipFilter: { enabled: false, allow: [], deny: [] },
};

const cidrs = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 4096 });
export const SYSTEM_PROMPT_SCHEMA = Type.Object(
  { enabled: Type.Optional(Type.Boolean()), prompt: Type.Optional(Type.String({ maxLength: 100_000 })), position: Type.Optional(Type.Union([Type.Literal('prepend'), Type.Literal('append')])) },
  { additionalProperties: false },
);
export const THINKING_SCHEMA = Type.Object(
  { mode: Type.Optional(Type.Union([Type.Literal('passthrough'), Type.Literal('fixed'), Type.Literal('cap')])), tokens: Type.Optional(Type.Integer({ minimum: 1024, maximum: 1_000_000 })) },
  { additionalProperties: false },
);
export const IP_FILTER_SCHEMA = Type.Object({ enabled: Type.Optional(Type.Boolean()), allow: Type.Optional(cidrs), deny: Type.Optional(cidrs) }, { additionalProperties: false });

export const validateGeneralPatch = compile(
  Type.Object(
    {
      requireLogin: Type.Optional(Type.Boolean()),
      mcpEnabled: Type.Optional(Type.Boolean()),
      a2aEnabled: Type.Optional(Type.Boolean()),
      systemPrompt: Type.Optional(SYSTEM_PROMPT_SCHEMA),
      thinkingBudget: Type.Optional(THINKING_SCHEMA),
      ipFilter: Type.Optional(IP_FILTER_SCHEMA),
    },
    { additionalProperties: false },
  ),
);

/** Parse `10.0.0.0/8`, `2001:db8::/32` or a single address into a BlockList entry; throws a readable message. */
function addCidr(list: BlockList, text: string): void {
  const [addr, bits] = text.trim().split('/');
  const family = isIP(addr ?? '');
  if (family === 0) throw new Error(`${text} is not an IP address or CIDR range`);
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (bits === undefined) return list.addAddress(addr!, type);
  const n = Number(bits);
  if (!/^\d+$/.test(bits) || n > (family === 4 ? 32 : 128)) throw new Error(`${text}: the prefix length must be 0-${family === 4 ? 32 : 128}`);
  list.addSubnet(addr!, n, type);
}

export interface IpFilter {
  /** Whether an address may use the TCP listener. */
  allows(ip: string): boolean;
}

/** Deny wins; with an allow list, only what it names gets in. IPv4-mapped IPv6 addresses count as IPv4. */
export function compileIpFilter(f: GeneralSettings['ipFilter']): IpFilter | undefined {
  if (!f.enabled || (f.allow.length === 0 && f.deny.length === 0)) return undefined;
  const allow = new BlockList();
  const deny = new BlockList();
  for (const c of f.allow) addCidr(allow, c);
  for (const c of f.deny) addCidr(deny, c);
  const has = (list: BlockList, ip: string) => {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)?.[1];
    const addr = mapped ?? ip;
    const family = isIP(addr);
    return family !== 0 && list.check(addr, family === 4 ? 'ipv4' : 'ipv6');
  };
  return { allows: (ip) => !has(deny, ip) && (f.allow.length === 0 || has(allow, ip)) };
}

export function checkGeneral(s: GeneralSettings): void {
  compileIpFilter({ ...s.ipFilter, enabled: true });
}
