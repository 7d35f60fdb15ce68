/**
 * Compression for the completion routes: resolve the plan, apply it to the request that goes
 * upstream, and afterwards (off the request's path) count the prompt's tokens before and after with
 * gpt-tokenizer into the compression log that the analytics read.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { CanonicalRequest } from '../canonical.js';
import type { LayeredSettings } from '../runtime-settings.js';
import { countText, estimateTokens, promptText } from '../translate/tokens.js';
import { redact, scan, SECRET_RULES } from '../guardrails/detectors.js';
import { applyPipeline, type Applied } from './modes.js';
import { resolvePlan, type Plan, type PlanInput } from './plan.js';
import type { CompressionSettings } from './settings.js';
import type { CompressionStore } from './store.js';


const OFF_PLAN: Plan = Object.freeze({ mode: 'off', source: 'off', steps: [] }) as Plan;
const OFF_HEADER = 'off; source=off';

export interface Compressed {
  request: CanonicalRequest;
  plan: Plan;
  applied?: Applied;
  /** `X-Gateway-Compression: <mode>; source=<source>`. */
  header: string;
}

export class CompressionService {
  constructor(
    readonly settings: LayeredSettings<CompressionSettings>,
    readonly store: CompressionStore,
    private readonly now: () => number,
    private readonly log: Logger,
  ) {}

  plan(req: CanonicalRequest, input: Omit<PlanInput, 'estimatedTokens'>): Plan {
    return resolvePlan(this.settings.value, this.store.combos(), { ...input, estimatedTokens: () => estimateTokens(req) });
  }

  /** Keep a tool output RTK shortened (secrets redacted) and return its id. */
  private keepRaw = (output: string): string | undefined => {
    if (!this.settings.value.rtk.keepRaw) return undefined;
    const id = `rtk_${randomBytes(9).toString('base64url')}`;
    this.store.keepRaw(id, this.now(), redact(output, scan(output, SECRET_RULES)));
    return id;
  };

  compress(req: CanonicalRequest, input: Omit<PlanInput, 'estimatedTokens'>): Compressed {
    // Compression off (the default): the same answer for every request, nothing to resolve.
    if (!this.settings.value.enabled) return { request: req, plan: OFF_PLAN, header: OFF_HEADER };
    const plan = this.plan(req, input);
    const header = `${plan.mode}; source=${plan.source}`;
    if (plan.steps.length === 0) return { request: req, plan, header };
    const applied = applyPipeline(req, plan.steps, this.settings.value, this.keepRaw);
    return { request: applied.request, plan, applied, header };
  }

  /** After the answer: tokens before and after into the log (skipped when nothing was applied). */
  record(requestId: string, original: CanonicalRequest, c: Compressed): void {
    if (!c.applied) return;
    const ts = this.now();
    setImmediate(() => {
      void Promise.resolve()
        .then(async () => {
          const tokensBefore = await countText(promptText(original).text);
          const tokensAfter = await countText(promptText(c.request).text);
          this.store.log({ ts, requestId, mode: c.plan.mode, source: c.plan.source, engines: c.applied!.engines, tokensBefore, tokensAfter });
        })
        .catch((e: unknown) => this.log.warn({ err: e }, 'gateway: compression log failed'));
    });
  }
}
