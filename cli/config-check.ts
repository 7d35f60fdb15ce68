/**
 * `ctl config check FILE...`: amtool check-config's checks and output, without a daemon: the file
 * loads as the alert manager loads it (every validation of 0.25), then its template files parse.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { loadConfig } from '../src/alertmanager/config/load.js';
import { loadTemplateFiles } from '../src/alertmanager/template/load.js';

/** Check one file, writing amtool's report through `out`; true when it is valid. */
export function checkConfigFile(file: string, out: (s: string) => void): boolean {
  out(`Checking '${file}'`);
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(readFileSync(file, 'utf8'), dirname(resolve(file)));
  } catch (e) {
    out(`  FAILED: ${(e as Error).message}\n\n`);
    return false;
  }
  const templates = (config.tree.templates ?? []) as string[];
  out('  SUCCESS\nFound:\n');
  out(' - global config\n');
  out(' - route\n');
  out(` - ${config.inhibitRules.length} inhibit rules\n`);
  out(` - ${config.receivers.length} receivers\n`);
  out(` - ${templates.length} templates\n`);
  // amtool parses the templates (and reports on them) only when there are some.
  if (templates.length > 0) {
    try {
      loadTemplateFiles(templates);
    } catch (e) {
      out(`  FAILED: ${(e as Error).message}\n\n`);
      return false;
    }
    out('  SUCCESS\n');
  }
  out('\n');
  return true;
}
