import { CommanderError } from 'commander';
import { buildProgram } from './program.js';
import { EXIT, fail } from './run.js';

try {
  const program = await buildProgram(process.argv.slice(2));
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) {
    // --help and --version exit 0; every parse error is a usage error.
    process.exit(e.exitCode === 0 ? EXIT.ok : EXIT.usage);
  }
  fail(e);
}
