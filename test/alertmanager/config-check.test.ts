import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CTL, startDaemon } from '../helpers/daemon.js';
import { alertmanagerBinary, amtoolBinary, startRealAlertmanager } from './real-alertmanager.js';

const dir = mkdtempSync(join(tmpdir(), 'ctl-check-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
mkdirSync(join(dir, 'tmpl'));
writeFileSync(join(dir, 'tmpl', 'good.tmpl'), '{{ define "x" }}{{ .Status }}{{ end }}');
const write = (name: string, text: string) => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};
const OK = write('ok.yml', 'route: {receiver: w}\nreceivers: [{name: w}]\ntemplates: ["tmpl/*.tmpl"]\ninhibit_rules: [{source_matchers: [a="b"], target_matchers: [c="d"]}]\n');
const BAD_ROUTE = write('bad-route.yml', 'route: {receiver: nope}\nreceivers: [{name: w}]\n');
const BAD_TEMPLATE = write('bad-template.yml', 'route: {receiver: w}\nreceivers: [{name: w}]\ntemplates: ["broken/*.tmpl"]\n');
mkdirSync(join(dir, 'broken'));
writeFileSync(join(dir, 'broken', 'b.tmpl'), '{{ define "b" }}{{ if }}{{ end }}');

/** Templates 0.25 refuses when it loads them, each with its own configuration. */
const BAD_TEMPLATES: Record<string, string> = {
  'func.tmpl': '{{ define "f" }}{{ .Status | nosuchfunc }}{{ end }}',
  'dup.tmpl': '{{ define "a" }}x{{ end }}\n{{ define "a" }}y\n{{ end }}',
  'num.tmpl': 'ok\n{{ 1x }}',
  'octal.tmpl': '{{ 08 }}',
  'exp.tmpl': '{{ 1e }}',
  'unclosed.tmpl': '{{ .X ',
};
mkdirSync(join(dir, 'bad'));
const BAD_CONFIGS = Object.entries(BAD_TEMPLATES).map(([name, text]) => {
  writeFileSync(join(dir, 'bad', name), text);
  return write(`bad-${name}.yml`, `route: {receiver: w}\nreceivers: [{name: w}]\ntemplates: ["${join(dir, 'bad', name)}"]\n`);
});

const ctl = (...files: string[]) => spawnSync(process.execPath, [CTL, 'config', 'check', ...files], { encoding: 'utf8', timeout: 20_000 });

describe('ctl config check', () => {
  it('reports as amtool check-config does, and exits 1 when a file is invalid', () => {
    const good = ctl(OK);
    expect(good.status).toBe(0);
    expect(good.stdout).toContain(' - 1 inhibit rules\n - 1 receivers\n - 1 templates\n  SUCCESS\n');
    const bad = ctl(BAD_ROUTE, BAD_TEMPLATE, OK);
    expect(bad.status).toBe(1);
    expect(bad.stdout).toContain('FAILED: undefined receiver "nope" used in route');
    expect(bad.stdout).toContain('FAILED: template: b.tmpl:1: missing value for if');
    expect(bad.stderr).toBe('ctl: error: failed to validate 2 file(s)\n\n');
  });

  it.skipIf(!amtoolBinary())('prints what amtool prints, byte for byte (its name aside), with its exit status', () => {
    const NO_TEMPLATES = write('no-templates.yml', 'route: {receiver: w}\nreceivers: [{name: w}]\n');
    const BAD_MATCHER = write('bad-matcher.yml', 'route: {receiver: w, routes: [{receiver: w, matchers: ["a=~("]}]}\nreceivers: [{name: w}]\n');
    const NESTED = write('nested.yml', 'route: receiver: w\n');
    const DUPLICATE = write('duplicate.yml', 'route: {receiver: w}\nreceivers: [{name: w}, {name: w}]\n');
    const MISSING = join(dir, 'missing.yml');
    const cases = [[OK], [BAD_ROUTE], [BAD_TEMPLATE], [NO_TEMPLATES], [BAD_MATCHER], [NESTED], [DUPLICATE], [MISSING], [OK, MISSING], [OK, BAD_ROUTE, NO_TEMPLATES], ...BAD_CONFIGS.map((f) => [f])];
    for (const files of cases) {
      const a = spawnSync(amtoolBinary()!, ['check-config', ...files], { encoding: 'utf8', timeout: 20_000 });
      const c = ctl(...files);
      const name = files.map((f) => f.slice(dir.length + 1)).join(' ');
      expect(c.stdout, name).toBe(a.stdout);
      expect(c.stderr, name).toBe(a.stderr.replace(/^amtool: /gm, 'ctl: '));
      expect(c.status, name).toBe(a.status);
    }
  });

  it('a template that does not parse keeps the old configuration on reload (500), as 0.25', async () => {
    const d = await startDaemon({ files: { 'alertmanager.yml': 'route: {receiver: w}\nreceivers: [{name: w}]\n' } });
    try {
      writeFileSync(join(d.dir, 'alertmanager.yml'), `route: {receiver: w}\nreceivers: [{name: w}, {name: v}]\ntemplates: ["${join(dir, 'broken')}/*.tmpl"]\n`);
      const r = await d.request('alertmanager', 'POST', '/-/reload');
      expect(r.status).toBe(500);
      expect(r.text).toBe('failed to reload config: failed to parse templates: template: b.tmpl:1: missing value for if\n');
      expect((await d.request('alertmanager', 'GET', '/api/v2/receivers')).json).toEqual([{ name: 'w' }]);
    } finally {
      await d.cleanup();
    }
  });

  it('refuses an unknown function, a name defined twice in one file and a bad number, with 0.25\'s words', () => {
    const out = ctl(...BAD_CONFIGS).stdout;
    expect(out).toContain('FAILED: template: func.tmpl:1: function "nosuchfunc" not defined');
    expect(out).toContain('FAILED: template: dup.tmpl:3: template: multiple definition of template "a"');
    expect(out).toContain('FAILED: template: num.tmpl:2: bad number syntax: "1x"');
    expect(out).toContain('FAILED: template: octal.tmpl:1: integer overflow: "08"');
    expect(out).toContain('FAILED: template: exp.tmpl:1: illegal number syntax: "1e"');
  });

  it.skipIf(!alertmanagerBinary())('answers a reload with a bad template as the real 0.25 does, and keeps the old configuration', async () => {
    const good = 'route: {receiver: w}\nreceivers: [{name: w}]\n';
    const real = await startRealAlertmanager(good);
    const d = await startDaemon({ files: { 'alertmanager.yml': good } });
    try {
      for (const [name, text] of Object.entries(BAD_TEMPLATES)) {
        const conf = `route: {receiver: w}\nreceivers: [{name: w}, {name: v}]\ntemplates: ["${join(dir, 'bad', name)}"]\n`;
        const want = await real.reload(conf);
        writeFileSync(join(d.dir, 'alertmanager.yml'), conf);
        const r = await d.request('alertmanager', 'POST', '/-/reload');
        expect([r.status, r.text], text).toEqual([want.status, want.text]);
        expect(r.text.startsWith('failed to reload config: failed to parse templates: template: ')).toBe(true);
      }
      expect((await d.request('alertmanager', 'GET', '/api/v2/receivers')).json).toEqual([{ name: 'w' }]);
    } finally {
      await d.cleanup();
      await real.stop();
    }
  });
});
