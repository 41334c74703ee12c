/**
 * The `service` program: parse the command line (parse-command-line.ts,
 * over the table in command-table.ts), then print the help, the version,
 * or run the command's handler (command-handlers.ts). Usage errors print
 * `error: <message>` and the command's help hint, exit 2.
 */
import { EngineError } from '../engine/errors.js';
import { helpText } from './command-help.js';
import { HANDLERS } from './command-handlers.js';
import { printUsageError, processIo, type Io } from './io.js';
import { parseCommandLine, UsageError, type CommandLine } from './parse-command-line.js';
import { VERSION } from '../engine/version.js';

export async function main(argv: readonly string[], io: Io = processIo): Promise<number> {
  let line: CommandLine;
  try {
    line = parseCommandLine(argv);
  } catch (err) {
    if (err instanceof UsageError) return printUsageError(err.message, err.topic, io);
    throw err;
  }
  if (line.kind === 'help') {
    io.out(helpText(line.topic));
    return 0;
  }
  if (line.kind === 'version') {
    io.out(`service, ${VERSION}\n`);
    return 0;
  }
  const { args } = line;
  try {
    return await HANDLERS[args.command]!(args, io);
  } catch (err) {
    if (err instanceof EngineError && err.code === 'usage') return printUsageError(err.message, args.command, io);
    throw err;
  }
}
