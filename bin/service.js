#!/usr/bin/env node
// Runs the compiled CLI (built by `npm ci` through the `prepare` script) so a
// command starts without a TypeScript compiler in the loop.
import { main } from '../dist/cli/main.js';

main(process.argv.slice(2)).then((code) => { process.exitCode = code; });
