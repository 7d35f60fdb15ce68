import { CommanderError } from 'commander';
import { buildProgram } from './program.js';
import { EXIT, fail } from './run.js';

try {
  await buildProgram().parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) {
    // --help and --version exit 0; every parse error is a usage error.
    process.exit(e.exitCode === 0 ? EXIT.ok : EXIT.usage);
  }
  fail(e);
}
