import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

export const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
export const distMain = fileURLToPath(new URL('../../dist/src/main.js', import.meta.url));
export const distCli = fileURLToPath(new URL('../../dist/src/cli/sdf.js', import.meta.url));

/** A TCP port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Tests that run the built program need `npm run build` first (`npm test` does it in `pretest`). */
export function requireBuild(path: string): void {
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`npm run build\` first`);
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a program to its end, with `input` on its standard input; its exit code and what it printed. */
export function runProgram(
  command: string,
  args: string[],
  options: { env: NodeJS.ProcessEnv; cwd?: string; input?: string; timeoutMs?: number },
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? projectRoot,
      env: options.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: options.timeoutMs,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

export function runNode(args: string[], env: NodeJS.ProcessEnv, input?: string, cwd = projectRoot): Promise<RunResult> {
  return runProgram(process.execPath, args, { env, input, cwd });
}

/** Starts a long-running Node process and resolves once a stdout line satisfies `ready`. */
export function startNode(
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: (line: string) => boolean,
  timeoutMs = 60_000,
): Promise<{ child: ChildProcess; line: string; output: () => string }> {
  return startProgram(process.execPath, args, env, ready, timeoutMs);
}

/**
 * Starts a long-running program and resolves once a stdout line satisfies `ready`. With `group`, it
 * leads a process group of its own, which `stopGroup` ends whole (npm and the program it runs).
 */
export function startProgram(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: (line: string) => boolean,
  timeoutMs = 60_000,
  group = false,
): Promise<{ child: ChildProcess; line: string; output: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: projectRoot,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: group,
    });
    let output = '';
    let buffered = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`not ready within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      output += d.toString();
      buffered += d.toString();
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (ready(line)) {
          clearTimeout(timer);
          resolve({ child, line, output: () => output });
        }
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before ready:\n${output}`));
    });
  });
}

export function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** Ends a process started with `group` and everything it started. */
export function stopGroup(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return resolve();
    child.once('exit', () => resolve());
    process.kill(-child.pid, 'SIGTERM');
  });
}
