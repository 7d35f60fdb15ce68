/**
 * The console's matcher parser (src/console/alertmanager/matchers.ts, run in the browser) reads
 * what the server's (src/alertmanager/matchers.ts) reads, the same way, and refuses what it refuses.
 */
import { describe, expect, it } from 'vitest';
import * as server from '../../src/alertmanager/matchers.js';
import * as browser from '../../src/console/alertmanager/matchers.js';

const GOOD = [
  'alertname="DiskFull"',
  'alertname=DiskFull',
  'severity!="page"',
  'instance=~"web[0-9]+"',
  'job!~"node|prom.*"',
  '{alertname="A", instance=~"b.*"}',
  'a="x,y", b="z"',
  'a="quote \\" inside"',
  'a="back\\\\slash"',
  'a="new\\nline"',
  '  a  =  "spaced"  ',
  'a=""',
  'a=~""',
  '{}',
  '',
  'a="ünïcödé"',
];
const BAD = ['a', '="x"', 'a=="x"', 'a="unterminated', 'a="x"y"', '1a="x"', 'a=~"("'];

describe('console matchers', () => {
  for (const text of GOOD) {
    it(`parses ${JSON.stringify(text)} as the server does`, () => {
      const want = server.parseMatchers(text.trim()).map((m) => ({ name: m.name, type: m.type, value: m.value }));
      const got = browser.parseMatchers(text).map((m) => ({ name: m.name, type: m.type, value: m.value }));
      expect(got).toEqual(want);
      expect(browser.parseMatchers(browser.formatMatchers(got)).map((m) => ({ name: m.name, type: m.type, value: m.value }))).toEqual(want);
    });
  }
  for (const text of BAD) {
    it(`refuses ${JSON.stringify(text)} as the server does`, () => {
      expect(() => server.parseMatchers(text)).toThrow();
      expect(() => browser.parseMatchers(text)).toThrow(browser.MatcherError);
    });
  }
  it('matches as the server does, regexes anchored', () => {
    const labels = { alertname: 'DiskFull', instance: 'web12' };
    for (const [text, want] of [
      ['instance=~"web1"', false],
      ['instance=~"web1.*"', true],
      ['instance=~"web1|web12"', true],
      ['missing=""', true],
      ['missing!=""', false],
      ['alertname!~"Disk.*"', false],
    ] as const) {
      expect(browser.matchesAll(browser.parseMatchers(text), labels), text).toBe(want);
      expect(server.matchesAll(server.parseMatchers(text), labels), text).toBe(want);
    }
  });
});
