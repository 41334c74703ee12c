/**
 * The `service` program as sade sees it: every command of the table with
 * its positional arguments, options, defaults, description and examples.
 * parse-command-line.ts hands it a command line already checked and put in
 * canonical form, so sade's own error paths (which print and call
 * process.exit) are never reached.
 */
import sade from 'sade';
import { COMMANDS } from './command-table.js';
import { VERSION } from '../engine/version.js';

/** A new program per parse: sade and mri keep state in the option tables they are given. */
export function sadeProgram(): sade.Sade {
  const prog = sade('service').version(VERSION);
  for (const c of COMMANDS) {
    prog.command(`${c.name}${c.args ? ` ${c.args}` : ''}`, c.summary);
    for (const o of c.options) {
      if (o.long === 'help') continue; // sade adds -h, --help itself
      prog.option(`${o.short ? `-${o.short}, ` : ''}--${o.long}`, o.help, o.default);
    }
    for (const e of c.examples) prog.example(e.replace(/^npx service /, ''));
  }
  return prog;
}
