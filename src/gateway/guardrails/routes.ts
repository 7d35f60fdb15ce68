/**
 * GET /api/guardrails (name, enabled, action, priority) and POST /api/guardrails/test
 * {input, disabledGuardrails?}: which guardrails fire on the input and what each would do
 * (management auth). `input` is a text or a list of {role, content} messages.
 */
import { Type } from '@sinclair/typebox';
import type { Router } from '../../http/router.js';
import { compile } from '../../http/schema.js';
import { ok, readPlainObject, validated } from '../routes/common.js';
import type { GuardrailConfig } from './config.js';
import { guardrailsFor, type Slot, type SlotRole } from './engine.js';

const DESCRIPTIONS: Record<string, string> = {
  pii: 'personal data: email addresses, phone numbers, payment card numbers (Luhn-checked), IBANs (mod-97-checked), US SSNs, UK NI numbers',
  secrets: 'credentials: private keys, AWS, GitHub, OpenAI, Anthropic, Slack, Google and Stripe keys, JWTs',
  'prompt-injection': 'attempts to override the instructions (ignore previous instructions, reveal the system prompt, jailbreak personas) in user and tool text',
  'max-size': 'the total text of a request above max_chars',
};

const validateTest = compile(
  Type.Object(
    {
      input: Type.Union([Type.String({ maxLength: 4_000_000 }), Type.Array(Type.Object({ role: Type.String(), content: Type.String() }), { maxItems: 1000 })]),
      disabledGuardrails: Type.Optional(Type.Array(Type.String(), { maxItems: 32 })),
    },
    { additionalProperties: false },
  ),
);

const ROLE_OF: Record<string, SlotRole> = { system: 'system', developer: 'system', user: 'user', assistant: 'assistant', tool: 'tool' };

export function guardrailRoutes(r: Router, config: () => readonly GuardrailConfig[]): void {
  const m = (route: ReturnType<Router['get']>) => route.tag('auth', 'management');
  m(
    r.get('/api/guardrails', (ctx) =>
      ok(ctx, {
        guardrails: config().map((g) => ({ name: g.name, enabled: g.enabled, action: g.action, priority: g.priority, ...(g.maxChars !== undefined ? { maxChars: g.maxChars } : {}), description: DESCRIPTIONS[g.name] })),
      }),
    ),
  );
  m(
    r.post('/api/guardrails/test', async (ctx) => {
      const b = validated(validateTest, await readPlainObject(ctx));
      const slots: Slot[] = typeof b.input === 'string' ? [{ role: 'user', text: b.input }] : b.input.map((x) => ({ role: ROLE_OF[x.role] ?? 'user', text: x.content }));
      const run = await guardrailsFor(config(), slots, new Set((b.disabledGuardrails ?? []).map((s) => s.toLowerCase())));
      ok(ctx, {
        blocked: run.blockedBy !== undefined,
        ...(run.blockedBy ? { blockedBy: run.blockedBy.name } : {}),
        results: run.results.map((x) => ({ name: x.name, action: x.action, fired: x.fired, findings: x.findings.map((f) => ({ kind: f.kind, ...(f.slot >= 0 ? { message: f.slot } : {}) })) })),
        output: typeof b.input === 'string' ? run.slots[0]!.text : run.slots.map((s, i) => ({ role: (b.input as { role: string }[])[i]!.role, content: s.text })),
      });
    }),
  );
}
