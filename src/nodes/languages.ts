import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
// Imported so that tsc copies the shipped packs next to the compiled module (they are read as text below).
import enUS from './lang/en_US.json' with { type: 'json' };
import ruRU from './lang/ru_RU.json' with { type: 'json' };
import znCN from './lang/zn_CN.json' with { type: 'json' };

/** Locales the session knows (`zn_CN` is the origin's spelling). */
export const LOCALES = ['en_US', 'ru_RU', 'zn_CN'] as const;
const SHIPPED: Record<string, unknown> = { en_US: enUS, ru_RU: ruRU, zn_CN: znCN };

export type PackResult = { ok: true; text: string } | { ok: false; code: 233 | 234 };

/**
 * Language packs for getlanguage. `Data` is the raw JSON text of the pack. Packs are read from
 * `languages-dir` when configured (a missing or invalid file answers 234), else the shipped ones.
 */
export class LanguagePacks {
  private readonly texts = new Map<string, string | null>();

  constructor(dir = '') {
    const shippedDir = fileURLToPath(new URL('./lang/', import.meta.url));
    for (const locale of LOCALES) {
      const path = join(dir || shippedDir, `${locale}.json`);
      let text: string | null;
      try {
        text = readFileSync(path, 'utf8');
        JSON.parse(text);
      } catch {
        // The shipped pack is also embedded in the module; a configured directory must be right.
        text = dir ? null : JSON.stringify(SHIPPED[locale]);
      }
      this.texts.set(locale, text);
    }
  }

  get(locale: string): PackResult {
    if (!this.texts.has(locale)) return { ok: false, code: 233 };
    const text = this.texts.get(locale);
    return text ? { ok: true, text } : { ok: false, code: 234 };
  }
}
