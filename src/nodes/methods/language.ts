import { Code } from '../codes.js';
import { ok, reply, type Reply } from '../envelope.js';
import type { Call, Services } from '../service.js';

/** getlanguage {View, Locale}: `Data` is the pack's raw JSON text; View is echoed back. */
export function getlanguage(s: Services, c: Call): Reply {
  const { View, Locale } = c.value;
  if (typeof View !== 'string') return reply(c.method, Code.NO_VIEW);
  if (typeof Locale !== 'string') return reply(c.method, Code.NO_LOCALE);
  if (Locale.length > 10 || View.length > 32) return reply(c.method, Code.LANG_OVERFLOW);
  const pack = s.languages.get(Locale);
  if (!pack.ok) return reply(c.method, pack.code);
  return ok(c.method, { Locale, View, Data: pack.text });
}
