/**
 * Go's Unicode case mapping, which is not JavaScript's: strings.ToUpper / ToLower map each code
 * point by its simple mapping (ß stays ß, ﬁ stays ﬁ, İ lowers to i), while Alertmanager's `title`
 * (golang.org/x/text/cases, American English) title-cases the first cased letter of each word with
 * the full mapping (ß → Ss, ǆ → ǅ, ﬁ → Fi) and lower-cases the rest of the word.
 */

/** Greek letters with ypogegrammeni: their simple upper (and title) case is the prosgegrammeni form. */
function greekIota(c: number): number | undefined {
  if ((c >= 0x1f80 && c <= 0x1f87) || (c >= 0x1f90 && c <= 0x1f97) || (c >= 0x1fa0 && c <= 0x1fa7)) return c + 8;
  if (c === 0x1fb3 || c === 0x1fc3 || c === 0x1ff3) return c + 9;
  return undefined;
}

const cps = (s: string) => [...s];

/** unicode.ToUpper of one code point. */
export function simpleUpper(ch: string): string {
  const g = greekIota(ch.codePointAt(0)!);
  if (g !== undefined) return String.fromCodePoint(g);
  const u = ch.toUpperCase();
  return cps(u).length === 1 ? u : ch;
}

/** unicode.ToLower of one code point. */
export function simpleLower(ch: string): string {
  if (ch === '\u0130') return 'i';
  const l = ch.toLowerCase();
  return cps(l).length === 1 ? l : ch;
}

export const goToUpper = (s: string) => cps(s).map(simpleUpper).join('');
export const goToLower = (s: string) => cps(s).map(simpleLower).join('');

/** Title case of one code point (the full mapping: may be more than one). */
function titleOf(ch: string): string {
  const c = ch.codePointAt(0)!;
  // The digraphs have a title case of their own.
  for (const [first, title] of [[0x1c4, 0x1c5], [0x1c7, 0x1c8], [0x1ca, 0x1cb], [0x1f1, 0x1f2]] as const) if (c >= first && c <= first + 2) return String.fromCodePoint(title);
  const g = greekIota(c);
  if (g !== undefined || (c >= 0x1f88 && c <= 0x1faf && (c & 0xf) >= 8) || c === 0x1fbc || c === 0x1fcc || c === 0x1ffc) return String.fromCodePoint(g ?? c);
  if (c === 0x149) return '\u02bcN';
  const u = cps(ch.toUpperCase());
  // ß → Ss, ﬁ → Fi: the upper case's first letter, the rest lower.
  return u.length === 1 ? u[0]! : u[0]! + u.slice(1).join('').toLowerCase();
}

const CASED = /^\p{Cased}$/u;
const CASE_IGNORABLE = /^\p{Case_Ignorable}$/u;
/** Word-internal punctuation (Unicode MidLetter and MidNumLet): a single one does not end a word. */
const MID = /^[:\u00b7\u0387\u055f\u05f4\u2027\ufe13\ufe55\uff1a.'\u2018\u2019\u2024\ufe52\uff07\uff0e]$/u;
/** What continues a word: letters, marks, digits, connectors, format characters and the mid punctuation. */
const WORD = /^[\p{L}\p{M}\p{Nd}\p{Nl}\p{Pc}\p{Cf}]$/u;

/** Lower case of one code point inside a word (Greek capital sigma becomes final at a word's end). */
function lowerIn(chars: string[], i: number): string {
  const ch = chars[i]!;
  if (ch !== '\u03a3') return ch.toLowerCase();
  const casedAt = (k: number, step: number) => {
    for (let j = k; j >= 0 && j < chars.length; j += step) {
      if (CASE_IGNORABLE.test(chars[j]!)) continue;
      return CASED.test(chars[j]!);
    }
    return false;
  };
  return casedAt(i - 1, -1) && !casedAt(i + 1, 1) ? '\u03c2' : '\u03c3';
}

/** cases.Title(language.AmericanEnglish).String. */
export function goTitle(s: string): string {
  const chars = cps(s);
  let out = '';
  let midWord = false;
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!;
    if (CASED.test(ch)) {
      out += midWord ? lowerIn(chars, i) : titleOf(ch);
      midWord = true;
    } else {
      out += ch;
      if (!WORD.test(ch) && !MID.test(ch)) midWord = false;
    }
    // Two word-internal punctuation marks in a row end the word.
    if (MID.test(ch) && MID.test(chars[i + 1] ?? '')) midWord = false;
  }
  return out;
}
