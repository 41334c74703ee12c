/**
 * `command` steps: only when the daemon runs with
 * `--allow-command-steps`. A string runs through `/bin/sh -c`, a list runs
 * without a shell; the process gets its own process group so a cancel or a
 * timeout reaches its children: SIGTERM, then SIGKILL after 5 s.
 * Output lines stream into the step log; state `{exit_code, stdout, stderr,
 * combined}` keeps the first 1 MiB of each. A non-zero exit fails the step.
 */
import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { EngineError } from '../../errors.js';
import type { CommandStep } from '../../jobs/index.js';
import { StepFailure, type StepContext } from '../context.js';
import type { Value } from '../evaluate.js';
import { projectPath } from '../paths.js';

export const COMMAND_OUTPUT_LIMIT = 1024 * 1024;
export const COMMAND_STEPS_DISABLED = 'command steps are disabled on this server';

class Capture {
  private text = '';
  truncated = false;

  add(chunk: string): void {
    if (this.truncated) return;
    if (this.text.length + chunk.length > COMMAND_OUTPUT_LIMIT) {
      this.text += chunk.slice(0, COMMAND_OUTPUT_LIMIT - this.text.length);
      this.truncated = true;
    } else this.text += chunk;
  }

  get value(): string {
    return this.text;
  }
}

/** Splits a stream into lines for the step log; the rest is flushed at the end. */
function lineSplitter(emit: (line: string) => void) {
  let rest = '';
  return {
    push(chunk: string) {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop()!;
      for (const p of parts) emit(p);
    },
    flush() {
      if (rest !== '') emit(rest);
      rest = '';
    },
  };
}

export async function runCommand(step: CommandStep, x: StepContext): Promise<Value> {
  if (!x.allowCommandSteps) throw new EngineError('node', COMMAND_STEPS_DISABLED);
  const argv = typeof step.command === 'string' ? ['/bin/sh', '-c', x.text(step.command)] : step.command.map((a) => x.text(a));
  if (argv.length === 0 || argv[0] === '') throw new EngineError('node', 'command is empty');
  const cwd = step.working_dir === undefined ? x.projectRoot : projectPath(x.projectRoot, x.text(step.working_dir), 'working_dir');
  if (!(await stat(cwd).then((s) => s.isDirectory(), () => false))) throw new EngineError('node', `working_dir ${JSON.stringify(step.working_dir)} is not a directory`);
  const env: Record<string, string | undefined> = { ...process.env };
  for (const [k, v] of Object.entries(step.env ?? {})) env[k] = typeof v === 'string' ? x.text(v) : String(v);
  if (x.signal.aborted) throw new EngineError('cancelled', 'cancelled');

  const stdout = new Capture();
  const stderr = new Capture();
  const combined = new Capture();
  const outLines = lineSplitter(x.log);
  const errLines = lineSplitter(x.log);
  const child = spawn(argv[0]!, argv.slice(1), { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (c: string) => (stdout.add(c), combined.add(c), outLines.push(c)));
  child.stderr.on('data', (c: string) => (stderr.add(c), combined.add(c), errLines.push(c)));

  let stopReason: 'cancel' | 'timeout' | undefined;
  let killTimer: NodeJS.Timeout | undefined;
  const signalGroup = (sig: NodeJS.Signals) => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, sig);
    } catch {
      child.kill(sig);
    }
  };
  const stop = (reason: 'cancel' | 'timeout') => {
    if (stopReason !== undefined) return;
    stopReason = reason;
    signalGroup('SIGTERM');
    killTimer = setTimeout(() => signalGroup('SIGKILL'), x.killGraceMs);
  };
  const onAbort = () => stop('cancel');
  x.signal.addEventListener('abort', onAbort, { once: true });
  const timeoutTimer = step.timeout === undefined ? undefined : setTimeout(() => stop('timeout'), step.timeout * 1000);

  let exit: { code: number | null; signal: NodeJS.Signals | null };
  try {
    exit = await new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (code, signal) => resolve({ code, signal }));
    });
  } catch (err) {
    throw new EngineError('node', `could not start command: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    x.signal.removeEventListener('abort', onAbort);
    clearTimeout(timeoutTimer);
    clearTimeout(killTimer);
    outLines.flush();
    errLines.flush();
  }
  if (stopReason === 'cancel') throw new EngineError('cancelled', 'cancelled');
  const exitCode = exit.code ?? (exit.signal !== null ? 128 + (signalNumber(exit.signal) ?? 0) : -1);
  const state = { exit_code: exitCode, stdout: stdout.value, stderr: stderr.value, combined: combined.value };
  if (stopReason === 'timeout') throw new StepFailure(`command timed out after ${step.timeout} s`, state);
  if (exitCode !== 0) throw new StepFailure(exit.signal !== null ? `command killed by ${exit.signal}` : `command exited with code ${exitCode}`, state);
  return state;
}

function signalNumber(sig: NodeJS.Signals): number | undefined {
  return ({ SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 } as Record<string, number>)[sig];
}
