import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers/daemon.js';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { man: string[]; files: string[] };

/** The documented install (`npm pack && npm install -g ./ctl-*.tgz`) and the systemd unit that runs it. */
describe('install', () => {
  it('installs every man page with the package (man ctl works after npm install -g)', () => {
    const pages = readdirSync(join(ROOT, 'man')).filter((f) => /\.\d$/.test(f));
    expect(pkg.man.map((m) => m.replace(/^\.\/man\//, '')).sort()).toEqual(pages.sort());
  });

  it('the package holds what ctl runs from (bin, the bundle, man pages) and not the tests', () => {
    const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, npm_config_update_notifier: 'false', npm_config_audit: 'false', npm_config_fund: 'false' },
    });
    expect(r.status, r.stderr).toBe(0);
    const files = (JSON.parse(r.stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
    for (const want of ['bin/ctl', 'dist/bundle/ctl.js', 'dist/bundle/skill-runner.mjs', 'dist/cli/main.js', 'dist/src/daemon/run.js', 'man/ctl.1', 'man/ctl.yaml.5', 'examples/ctl.service', 'package.json']) {
      expect(files).toContain(want);
    }
    expect(files.some((f) => f.startsWith('dist/test/') || f.startsWith('test/') || f.startsWith('src/'))).toBe(false);
  });

  it('examples/ctl.service restarts on failure with a start limit and room for connections', () => {
    const unit = readFileSync(join(ROOT, 'examples', 'ctl.service'), 'utf8');
    expect(unit).toMatch(/^Restart=on-failure$/m);
    expect(unit).toMatch(/^StartLimitIntervalSec=\d+$/m);
    expect(unit).toMatch(/^StartLimitBurst=\d+$/m);
    expect(unit).toMatch(/^LimitNOFILE=65536$/m);
    expect(unit).toMatch(/^ExecStart=\/usr\/local\/bin\/ctl serve/m);
  });

  it('systemd-analyze verify accepts the unit (ExecStart pointed at this checkout, man page on MANPATH)', () => {
    const which = spawnSync('sh', ['-c', 'command -v systemd-analyze'], { encoding: 'utf8' });
    // .ci/run installs systemd; on a machine without it there is nothing to run the unit anyway.
    if (which.status !== 0) return;
    const dir = mkdtempSync(join(tmpdir(), 'ctl-unit-'));
    try {
      mkdirSync(join(dir, 'man', 'man1'), { recursive: true });
      symlinkSync(join(ROOT, 'man', 'ctl.1'), join(dir, 'man', 'man1', 'ctl.1'));
      const unit = readFileSync(join(ROOT, 'examples', 'ctl.service'), 'utf8').replace(/^ExecStart=\/usr\/local\/bin\/ctl/m, `ExecStart=${join(ROOT, 'bin', 'ctl')}`);
      writeFileSync(join(dir, 'ctl.service'), unit);
      const r = spawnSync('systemd-analyze', ['verify', join(dir, 'ctl.service')], { encoding: 'utf8', timeout: 30_000, env: { ...process.env, MANPATH: join(dir, 'man') } });
      expect(r.stderr + r.stdout).toBe('');
      expect(r.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
