/**
 * Shared set-up for the official-SDK end-to-end tests: one mock upstream for every provider kind and
 * the real gateway component (test/gateway/harness.ts) with one provider per kind, API keys enforced.
 */
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startGateway, type GatewayHarness } from './harness.js';

export const GW_KEY = 'sk-gw-sdk-test-0000';

/** Gateway model id per upstream kind. */
export const MODELS = {
  openai: 'oa/m1',
  anthropic: 'an/claude-x',
  gemini: 'ge/gemini-x',
  ollama: 'ol/llama-x',
} as const;

export type UpstreamKind = keyof typeof MODELS;
export const UPSTREAM_KINDS = Object.keys(MODELS) as UpstreamKind[];

/** 1×1 PNG. */
export const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

export const WEATHER_SCHEMA = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };

export interface SdkFixture {
  mock: MockUpstream;
  gw: GatewayHarness;
  close(): Promise<void>;
}

export async function startSdkFixture(): Promise<SdkFixture> {
  const mock = await startLlmUpstream({ apiKey: 'sk-upstream' });
  const yaml = `
providers:
  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: "sk-upstream", models: [m1]}
  - {id: an, kind: anthropic, base_url: "${mock.baseUrl('anthropic')}", api_key: "sk-upstream", models: [claude-x]}
  - {id: ge, kind: gemini, base_url: "${mock.baseUrl('gemini')}", api_key: "sk-upstream", models: [gemini-x]}
  - {id: ol, kind: ollama, base_url: "${mock.baseUrl('ollama')}", api_key: "sk-upstream", models: [llama-x]}
keys:
  - {name: sdk, key: "${GW_KEY}", models: ["*"]}
`;
  const gw = await startGateway({ yaml, env: { REQUIRE_API_KEY: 'true' } });
  return {
    mock,
    gw,
    async close() {
      await gw.close();
      await mock.close();
    },
  };
}

/** The body the mock upstream received for the last request of a kind. */
export function lastUpstreamBody(mock: MockUpstream, kind: UpstreamKind): string {
  const r = [...mock.requests].reverse().find((x) => x.kind === kind);
  return JSON.stringify(r?.body ?? null);
}
