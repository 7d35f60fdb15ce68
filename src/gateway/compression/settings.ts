/**
 * Compression settings: built-in defaults < gateway.yaml `compression:` < `/api/settings/compression`
 * (and its parts `/api/context/caveman/config`, `/api/context/rtk/config`). Off by default.
 */
import { Type } from '@sinclair/typebox';
import { compile } from '../../http/schema.js';
import type { CavemanIntensity } from './caveman.js';

export const MODES = ['off', 'lite', 'standard', 'aggressive', 'ultra', 'rtk', 'stacked'] as const;
export type Mode = (typeof MODES)[number];

export interface CompressionSettings {
  /** The master switch: off, nothing compresses, whatever a request asks. */
  enabled: boolean;
  /** The panel Default profile: the mode when nothing else decides. */
  defaultMode: Mode;
  /** Estimated prompt tokens from which `autoMode` applies (0: never). */
  autoTriggerTokens: number;
  autoMode: Mode;
  /** A compression combo (by name or id) that applies to every request while set. */
  activeProfile: string | null;
  caveman: { intensity: CavemanIntensity; minMessageChars: number; language: string; roles: ('user' | 'assistant' | 'system')[] };
  rtk: { maxLines: number; maxChars: number; collapseRepeats: number; keepRaw: boolean };
}

export const DEFAULT_COMPRESSION: CompressionSettings = {
  enabled: false,
  defaultMode: 'off',
  autoTriggerTokens: 0,
  autoMode: 'lite',
  activeProfile: null,
  caveman: { intensity: 'full', minMessageChars: 50, language: 'en', roles: ['user'] },
  rtk: { maxLines: 120, maxChars: 12_000, collapseRepeats: 3, keepRaw: false },
};

const mode = Type.Union(MODES.map((m) => Type.Literal(m)));
export const CAVEMAN_SCHEMA = Type.Object(
  {
    intensity: Type.Optional(Type.Union([Type.Literal('lite'), Type.Literal('full'), Type.Literal('ultra')])),
    minMessageChars: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
    language: Type.Optional(Type.String({ minLength: 2, maxLength: 10 })),
    roles: Type.Optional(Type.Array(Type.Union([Type.Literal('user'), Type.Literal('assistant'), Type.Literal('system')]), { minItems: 1, maxItems: 3 })),
  },
  { additionalProperties: false },
);
export const RTK_SCHEMA = Type.Object(
  {
    maxLines: Type.Optional(Type.Integer({ minimum: 5, maximum: 100_000 })),
    maxChars: Type.Optional(Type.Integer({ minimum: 200, maximum: 10_000_000 })),
    collapseRepeats: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    keepRaw: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export const validateCompressionPatch = compile(
  Type.Object(
    {
      enabled: Type.Optional(Type.Boolean()),
      defaultMode: Type.Optional(mode),
      autoTriggerTokens: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000_000 })),
      autoMode: Type.Optional(mode),
      activeProfile: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 128 }), Type.Null()])),
      caveman: Type.Optional(CAVEMAN_SCHEMA),
      rtk: Type.Optional(RTK_SCHEMA),
    },
    { additionalProperties: false },
  ),
);

export function checkCompression(s: CompressionSettings, languages: readonly string[]): void {
  if (!languages.includes(s.caveman.language)) throw new Error(`caveman.language ${s.caveman.language} has no language pack (${languages.join(', ')})`);
}
