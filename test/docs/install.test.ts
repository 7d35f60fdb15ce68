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
      timeout: 85_000,
      env: { ...process.env, npm_config_update_notifier: 'false', npm_config_audit: 'false', npm_config_fund: 'false' },
    });
    expect(r.status, r.stderr).toBe(0);
    const files = (JSON.parse(r.stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
    for (const want of ['bin/ctl', 'dist/bundle/ctl.js', 'dist/bundle/skill-runner.mjs', 'dist/console/alertmanager.js', 'dist/cli/main.js', 'dist/src/daemon/run.js', 'man/ctl.1', 'man/ctl.yaml.5', 'examples/ctl.service', 'package.json']) {
      expect(files).toContain(want);
    }
    expect(files.some((f) => f.startsWith('dist/test/') || f.startsWith('test/') || f.startsWith('src/'))).toBe(false);
  }, 90_000); // npm pack lists ~1,200 files: 18 s quiet, 44-78 s on a loaded machine

  it('examples/ctl.service restarts on failure with a start limit and room for connections', () => {
    const unit = readFileSync(join(ROOT, 'examples', 'ctl.service'), 'utf8');
    expect(unit).toMatch(/^Restart=on-failure$/m);
    expect(unit).toMatch(/^StartLimitIntervalSec=\d+$/m);
    expect(unit).toMatch(/^StartLimitBurst=\d+$/m);
    expect(unit).toMatch(/^LimitNOFILE=65536$/m);
    expect(unit).toMatch(/^ExecStart=\/usr\/local\/bin\/ctl serve/m);
  });

  it('examples/ctl.service runs as a dedicated user that owns the state dir', () => {
    const unit = readFileSync(join(ROOT, 'examples', 'ctl.service'), 'utf8');
    const dynamic = /^DynamicUser=(yes|true)$/m.test(unit);
    const named = /^User=(?!root$)\S+$/m.test(unit);
    expect(dynamic || named).toBe(true);
    expect(unit).toMatch(/^StateDirectory=ctl$/m);
    expect(unit).toMatch(/^ExecStart=\S*ctl serve --state-dir \/var\/lib\/ctl$/m);
  });

  /** The unit with ExecStart pointed at this checkout, in a temporary dir with `man ctl` on its MANPATH. */
  function withUnit(run: (path: string, env: NodeJS.ProcessEnv) => void): void {
    const which = spawnSync('sh', ['-c', 'command -v systemd-analyze'], { encoding: 'utf8' });
    // .ci/run installs systemd; on a machine without it there is nothing to run the unit anyway.
    if (which.status !== 0) return;
    const dir = mkdtempSync(join(tmpdir(), 'ctl-unit-'));
    try {
      mkdirSync(join(dir, 'man', 'man1'), { recursive: true });
      symlinkSync(join(ROOT, 'man', 'ctl.1'), join(dir, 'man', 'man1', 'ctl.1'));
      const unit = readFileSync(join(ROOT, 'examples', 'ctl.service'), 'utf8').replace(/^ExecStart=\/usr\/local\/bin\/ctl/m, `ExecStart=${join(ROOT, 'bin', 'ctl')}`);
      writeFileSync(join(dir, 'ctl.service'), unit);
      run(join(dir, 'ctl.service'), { ...process.env, MANPATH: join(dir, 'man') });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('systemd-analyze verify accepts the unit (ExecStart pointed at this checkout, man page on MANPATH)', () => {
    withUnit((path, env) => {
      const r = spawnSync('systemd-analyze', ['verify', path], { encoding: 'utf8', timeout: 30_000, env });
      expect(r.stderr + r.stdout).toBe('');
      expect(r.status).toBe(0);
    });
  });

  it('systemd-analyze security rates the unit 4.0 or better (lower is less exposed)', () => {
    withUnit((path, env) => {
      const r = spawnSync('systemd-analyze', ['security', '--offline=true', '--no-pager', path], { encoding: 'utf8', timeout: 30_000, env });
      expect(r.status, r.stderr).toBe(0);
      const m = /Overall exposure level for ctl\.service: (\d+(?:\.\d+)?) /.exec(r.stdout);
      expect(m, r.stdout).not.toBeNull();
      expect(Number(m![1])).toBeLessThanOrEqual(4.0);
    });
  });
});
