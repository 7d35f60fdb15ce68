/**
 * Lite compression: whitespace only, nothing that changes meaning. Runs of spaces and tabs become
 * one space, three or more line breaks become two, trailing spaces go; code blocks and other
 * protected spans keep their exact bytes.
 */
import { protect, restore } from './protect.js';

export function lite(text: string): string {
  const p = protect(text);
  const out = p.text
    .replace(/[ \t]+$/gm, '')
    .replace(/[ \t]{2,}/g, ' ')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return restore({ text: out, pieces: p.pieces });
}
