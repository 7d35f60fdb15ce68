import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CRASH_EXIT_CODE, crashLine } from '../../src/daemon/crash.js';
import { startDaemon } from '../helpers/daemon.js';

describe('a crash', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ctl-crash-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is one line: kind, error and the frame that threw', () => {
    const e = new TypeError('x is not a function\nsecond line');
    e.stack = 'TypeError: x is not a function\n    at handler (/srv/ctl/dist/a.js:10:5)\n    at next (/srv/ctl/dist/b.js:1:1)';
    expect(crashLine('uncaught exception', e)).toBe('ctl serve: fatal uncaught exception: TypeError: x is not a function second line (at handler (/srv/ctl/dist/a.js:10:5))');
    expect(crashLine('unhandled rejection', 'just a string')).toBe('ctl serve: fatal unhandled rejection: just a string');
  });

  it('logs its cause in one line and exits non-zero (so systemd restarts the daemon)', async () => {
    // Something that escapes every handler once the daemon runs, as a bug would (on a signal the test sends).
    const preload = join(dir, 'throw-later.cjs');
    writeFileSync(preload, "process.on('SIGUSR2', () => setTimeout(() => { throw new RangeError('escaped every handler'); }, 0));\n");
    const d = await startDaemon({ env: { NODE_OPTIONS: `--require ${preload}` } });
    try {
      d.signal('SIGUSR2');
      expect(await d.waitExit()).toBe(CRASH_EXIT_CODE);
      const fatal = d.log.split('\n').filter((l) => l.includes('"level":60'));
      expect(fatal).toHaveLength(1);
      expect(fatal[0]).toContain('ctl serve: fatal uncaught exception: RangeError: escaped every handler (at Timeout._onTimeout');
    } finally {
      await d.cleanup();
    }
  });
});
