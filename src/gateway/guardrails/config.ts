/**
 * gateway.yaml `guardrails:` — name → {enabled, action: block | redact | warn, priority}, for the
 * built-ins `pii`, `secrets`, `prompt-injection` and `max-size` (which also takes `max_chars`).
 * Unset, each is on with action `warn` (the hit is logged and recorded, the request unchanged),
 * except `max-size`, which blocks requests of more than 2,000,000 characters of text.
 */
import { Type } from '@sinclair/typebox';
import { compile, describeErrors } from '../../http/schema.js';

export const GUARDRAIL_NAMES = ['pii', 'secrets', 'prompt-injection', 'max-size'] as const;
export type GuardrailName = (typeof GUARDRAIL_NAMES)[number];
export type GuardrailAction = 'block' | 'redact' | 'warn';

export interface GuardrailConfig {
  name: GuardrailName;
  enabled: boolean;
  action: GuardrailAction;
  priority: number;
  maxChars?: number;
}

export const DEFAULT_GUARDRAILS: GuardrailConfig[] = [
  { name: 'max-size', enabled: true, action: 'block', priority: 0, maxChars: 2_000_000 },
  { name: 'secrets', enabled: true, action: 'warn', priority: 10 },
  { name: 'pii', enabled: true, action: 'warn', priority: 20 },
  { name: 'prompt-injection', enabled: true, action: 'warn', priority: 30 },
];

const entry = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    action: Type.Optional(Type.Union([Type.Literal('block'), Type.Literal('redact'), Type.Literal('warn')])),
    priority: Type.Optional(Type.Integer({ minimum: -1000, maximum: 1000 })),
    max_chars: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000_000 })),
  },
  { additionalProperties: false },
);
const validate = compile(Type.Record(Type.String(), entry));

/** The built-ins with the file's settings over the defaults, in priority order (then by name). */
export function parseGuardrails(raw: unknown): GuardrailConfig[] {
  if (raw === undefined || raw === null) return DEFAULT_GUARDRAILS;
  if (!validate(raw)) throw new Error(describeErrors(validate.errors, 'guardrails'));
  const doc = raw as Record<string, { enabled?: boolean; action?: GuardrailAction; priority?: number; max_chars?: number }>;
  for (const name of Object.keys(doc)) if (!(GUARDRAIL_NAMES as readonly string[]).includes(name)) throw new Error(`guardrails: unknown guardrail ${name} (built in: ${GUARDRAIL_NAMES.join(', ')})`);
  return DEFAULT_GUARDRAILS.map((d) => {
    const o = doc[d.name];
    if (!o) return d;
    if (o.max_chars !== undefined && d.name !== 'max-size') throw new Error(`guardrails ${d.name}: max_chars belongs to max-size`);
    return { ...d, ...(o.enabled !== undefined ? { enabled: o.enabled } : {}), ...(o.action ? { action: o.action } : {}), ...(o.priority !== undefined ? { priority: o.priority } : {}), ...(o.max_chars !== undefined ? { maxChars: o.max_chars } : {}) };
  }).sort((a, b) => a.priority - b.priority || a.name.localeCompare(b.name));
}
