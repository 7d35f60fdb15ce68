/**
 * Caveman: rule-based rewriting that drops words which carry no meaning for a model (pleasantries,
 * polite framing, hedging, filler, verbose phrasing, meta commentary, emphasis). Protected spans
 * (code, URLs, paths, JSON) are never touched. `ultra` also abbreviates common long words.
 */
import { protect, restore } from './protect.js';

export type CavemanIntensity = 'lite' | 'full' | 'ultra';

export interface CavemanRule {
  family: string;
  name: string;
  pattern: RegExp;
  replace: string;
  /** Only at `ultra`, or also at `lite`. */
  level: CavemanIntensity;
}

const r = (family: string, name: string, pattern: RegExp, replace = '', level: CavemanIntensity = 'full'): CavemanRule => ({ family, name, pattern, replace, level });

const EN: CavemanRule[] = [
  r('pleasantries', 'opening', /(^|[.!?]\s+)(?:hi|hello|hey)(?: there)?[,!.]?\s+/gim, '$1', 'lite'),
  r('pleasantries', 'sure', /(^|[.!?]\s+)(?:sure|certainly|of course|absolutely)[,!.]\s*/gim, '$1', 'lite'),
  r('pleasantries', 'happy-to-help', /\bI(?:'d| would) be (?:happy|glad) to help(?: you)?(?: with (?:that|this))?[.!]?\s*/gi, '', 'lite'),
  r('pleasantries', 'thanks', /\s*\b(?:many )?thanks?(?: you)?(?: so much| very much| a lot| in advance)?[.!]*(?=\s*$)/gim, '', 'lite'),
  r('pleasantries', 'hope-helps', /\s*\bI hope (?:this|that) helps[.!]?/gi, '', 'lite'),
  r('polite', 'could-you-please', /\b(?:could|can|would|will) you (?:please |kindly )?(?=\w)/gi),
  r('polite', 'please', /\bplease,?\s+/gi),
  r('polite', 'kindly', /\bkindly\s+/gi),
  r('polite', 'wondering', /\bI was (?:wondering|hoping) (?:if|whether) you could\s+/gi),
  r('polite', 'would-like', /\bI(?:'d| would) (?:like|love|want) (?:for )?you to\s+/gi),
  r('polite', 'do-me-a-favor', /\b(?:do me a favou?r and|if you don't mind,?|if it's not too much trouble,?)\s*/gi),
  r('hedging', 'i-think', /\bI (?:think|believe|guess|suppose|feel like|reckon) (?:that )?/gi),
  r('hedging', 'maybe', /\b(?:probably|perhaps|maybe|possibly|arguably|presumably)\s+/gi),
  r('hedging', 'it-seems', /\bit (?:seems|appears|looks) (?:like|that|as if)\s+/gi),
  r('hedging', 'sort-of', /\b(?:sort|kind) of\s+/gi),
  r('hedging', 'in-my-opinion', /\b(?:in my (?:humble )?opinion|to be honest|as far as I know|if I'm not mistaken),?\s*/gi),
  r('filler', 'adverbs', /\b(?:basically|actually|literally|really|simply|totally|honestly|essentially|obviously|clearly|just)\s+/gi),
  r('verbose', 'in-order-to', /\bin order to\b/gi, 'to', 'lite'),
  r('verbose', 'due-to-the-fact', /\b(?:due to|owing to) the fact that\b/gi, 'because', 'lite'),
  r('verbose', 'at-this-point', /\bat (?:this|the present) (?:point in )?time\b/gi, 'now', 'lite'),
  r('verbose', 'in-the-event', /\bin the event that\b/gi, 'if', 'lite'),
  r('verbose', 'for-the-purpose', /\bfor the purpose of\b/gi, 'for', 'lite'),
  r('verbose', 'with-regard', /\bwith (?:regard|respect|reference) to\b/gi, 'about'),
  r('verbose', 'in-spite', /\b(?:in spite of|despite) the fact that\b/gi, 'although'),
  r('verbose', 'large-number', /\ba (?:large|great) number of\b/gi, 'many'),
  r('verbose', 'able-to', /\b(?:is|are) able to\b/gi, 'can'),
  r('verbose', 'has-ability', /\b(?:has|have) the (?:ability|capacity) to\b/gi, 'can'),
  r('verbose', 'make-decision', /\bmake a decision\b/gi, 'decide'),
  r('verbose', 'take-consideration', /\btake into (?:consideration|account)\b/gi, 'consider'),
  r('verbose', 'prior-to', /\bprior to\b/gi, 'before'),
  r('verbose', 'subsequent-to', /\bsubsequent to\b/gi, 'after'),
  r('verbose', 'close-proximity', /\bin close proximity to\b/gi, 'near'),
  r('meta', 'my-question', /\b(?:my question is(?: this)?|I have a question(?: for you)?|here is my question)[:,.]?\s*/gi),
  r('meta', 'as-mentioned', /\bas I (?:mentioned|said|noted) (?:before|earlier|above|previously),?\s*/gi),
  r('meta', 'i-want-to-know', /\bI (?:want|would like|need) to know\s+/gi),
  r('emphasis', 'intensifiers', /\b(?:very|extremely|incredibly|super|highly|truly|absolutely)\s+(?=\w)/gi),
  r('abbreviations', 'configuration', /\bconfiguration\b/gi, 'config', 'ultra'),
  r('abbreviations', 'application', /\bapplication\b/gi, 'app', 'ultra'),
  r('abbreviations', 'repository', /\brepository\b/gi, 'repo', 'ultra'),
  r('abbreviations', 'information', /\binformation\b/gi, 'info', 'ultra'),
  r('abbreviations', 'documentation', /\bdocumentation\b/gi, 'docs', 'ultra'),
  r('abbreviations', 'environment', /\benvironment\b/gi, 'env', 'ultra'),
  r('abbreviations', 'database', /\bdatabase\b/gi, 'DB', 'ultra'),
  r('abbreviations', 'directory', /\bdirectory\b/gi, 'dir', 'ultra'),
  r('abbreviations', 'development', /\bdevelopment\b/gi, 'dev', 'ultra'),
  r('abbreviations', 'production', /\bproduction\b/gi, 'prod', 'ultra'),
  r('abbreviations', 'parameters', /\bparameters\b/gi, 'params', 'ultra'),
  r('abbreviations', 'without', /\bwithout\b/gi, 'w/o', 'ultra'),
];

const ES: CavemanRule[] = [
  r('pleasantries', 'saludo', /(^|[.!?]\s+)(?:hola|buenas)[,!.]?\s+/gim, '$1', 'lite'),
  r('pleasantries', 'gracias', /\s*\b(?:muchas )?gracias(?: de antemano)?[.!]*(?=\s*$)/gim, '', 'lite'),
  r('polite', 'por-favor', /\bpor favor,?\s*/gi),
  r('polite', 'podrias', /\b(?:¿)?(?:podrías|puedes|podría usted)\s+/gi, '¿'),
  r('hedging', 'creo-que', /\b(?:creo|pienso|supongo) que\s+/gi),
  r('hedging', 'quizas', /\b(?:quizás|quizá|tal vez|probablemente)\s+/gi),
  r('filler', 'adverbios', /\b(?:básicamente|realmente|simplemente|literalmente|en realidad)\s+/gi),
  r('verbose', 'con-el-fin', /\bcon el fin de\b/gi, 'para', 'lite'),
  r('verbose', 'debido-a', /\bdebido a (?:que|el hecho de que)\b/gi, 'porque', 'lite'),
  r('verbose', 'en-este-momento', /\ben este momento\b/gi, 'ahora', 'lite'),
];

export const LANGUAGE_PACKS: Record<string, { name: string; rules: CavemanRule[] }> = {
  en: { name: 'English', rules: EN },
  es: { name: 'Español', rules: ES },
};

const LEVELS: Record<CavemanIntensity, number> = { lite: 0, full: 1, ultra: 2 };

export interface RuleCount {
  rule: string;
  count: number;
}

/** Tidy what removals leave: doubled spaces, space before punctuation, a lower-case sentence start. */
function tidy(text: string): string {
  return text
    .replace(/[ \t]{2,}/g, ' ')
    .replace(/ +([,.;:!?])/g, '$1')
    .replace(/^[ \t]+/gm, '')
    .replace(/(^|[.!?]\s+|\n)([a-z])/g, (_m, pre: string, ch: string) => pre + ch.toUpperCase())
    .replace(/,\s*([.!?])/g, '$1')
    .trim();
}

export function caveman(text: string, intensity: CavemanIntensity, language = 'en', counts?: Map<string, number>): string {
  const pack = LANGUAGE_PACKS[language] ?? LANGUAGE_PACKS.en!;
  const p = protect(text);
  let out = p.text;
  const level = LEVELS[intensity];
  for (const rule of pack.rules) {
    if (LEVELS[rule.level] > level) continue;
    let n = 0;
    out = out.replace(rule.pattern, (...args: unknown[]) => {
      n++;
      // Keep the captured sentence boundary where the replacement asks for it.
      return rule.replace.replace(/\$(\d)/g, (_, i: string) => String(args[Number(i)] ?? ''));
    });
    if (n > 0 && counts) counts.set(`${rule.family}/${rule.name}`, (counts.get(`${rule.family}/${rule.name}`) ?? 0) + n);
  }
  return restore({ text: tidy(out), pieces: p.pieces });
}
