/**
 * Libraries only some configurations need are loaded on first use (src/http/lazy.ts), not when the
 * alert manager starts: an alert manager without email_configs does not keep nodemailer's modules
 * in memory. A static `import` of them anywhere in the component would load them at start again.
 * (re2js stays imported: the gateway imports its ES module build, and a require() here would load
 * its CommonJS build beside it in the daemon.)
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../../src/alertmanager');
const staticImport = (pkg: string) => new RegExp(`^\\s*import\\s+(?!type\\b)[^;]*from\\s+'${pkg}[/']`, 'm');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

describe('alert manager start-up modules', () => {
  it('imports nodemailer only as types: the SMTP client is required when the first email is sent', () => {
    const offenders = sources(root).filter((f) => staticImport('nodemailer').test(readFileSync(f, 'utf8')));
    expect(offenders).toEqual([]);
    // And the lazy load is there (the email receiver still sends: receivers.test.ts).
    expect(readFileSync(join(root, 'receivers/email.ts'), 'utf8')).toMatch(/lazyRequire<[^>]+>\('nodemailer\/lib\/smtp-connection'\)/);
  });
});
