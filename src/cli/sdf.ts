#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { SdfError } from '../sdf/errors.js';
import { readPackageVersion } from '../config/project.js';
import { CliRefusal, registerAdminCommands } from './admin-commands.js';
import { CliUsageError, registerFormatCommands } from './format-commands.js';
import { registerWatchCommand } from './watch-command.js';

/** Exit codes: 0 ok, 1 SDF error, 2 usage error, 3 internal error. */
export const EXIT = { ok: 0, sdf: 1, usage: 2, internal: 3 } as const;

const program = new Command('sdf')
  .description('Build, inspect, validate and sign SDF files')
  .version(readPackageVersion(), '-V, --version', 'print the version of sdf and exit')
  .exitOverride();
registerFormatCommands(program);
registerAdminCommands(program);
registerWatchCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  process.exitCode = await exitCodeFor(error);
}

async function exitCodeFor(error: unknown): Promise<number> {
  if (error instanceof CommanderError) {
    // --help and --version end through exitOverride too, with exit code 0.
    return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  if (error instanceof SdfError) {
    process.stderr.write(`${error.code}: ${error.message}\n`);
    for (const detail of error.details) process.stderr.write(`  ${detail.path || '/'}: ${detail.message}\n`);
    return EXIT.sdf;
  }
  if (error instanceof CliRefusal) {
    process.stderr.write(`sdf: ${error.message}\n`);
    return EXIT.sdf;
  }
  if (error instanceof CliUsageError) {
    process.stderr.write(`sdf: ${error.message}\n`);
    return EXIT.usage;
  }
  // The service layer's errors, loaded only here: a format command never loads the service's modules.
  const { AppError } = await import('../common/errors.js');
  if (error instanceof AppError) {
    // Operator commands go through the service layer: its refusals (not found, conflict) are errors of the request.
    process.stderr.write(`sdf: ${error.message}\n`);
    for (const detail of error.details) process.stderr.write(`  ${detail.path || '/'}: ${detail.message}\n`);
    return error.status >= 500 ? EXIT.internal : error.status === 400 ? EXIT.usage : EXIT.sdf;
  }
  process.stderr.write(`sdf: internal error: ${(error as Error)?.message ?? String(error)}\n`);
  return EXIT.internal;
}
