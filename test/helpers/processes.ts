import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

export const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
export const distMain = fileURLToPath(new URL('../../dist/src/main.js', import.meta.url));
export const distCli = fileURLToPath(new URL('../../dist/src/cli/sdf.js', import.meta.url));

/**
 * The ports the kernel gives outgoing connections (Linux: /proc/sys/net/ipv4/ip_local_port_range). A port
 * picked from them can be taken by some connection's local end between the pick and the server's listen,
 * or while a server is stopped and about to start again on it (an own PostgreSQL or Redis): ports below
 * them never are.
 */
function ephemeralLow(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    const n = Number(low);
    return Number.isInteger(n) && n > 2048 ? n : 32_768;
  } catch {
    return 32_768;
  }
}
const PORTS_FROM = 10_000;
const PORTS_BELOW = Math.max(PORTS_FROM + 1000, ephemeralLow());
/** Ports this process has handed out: never handed out twice. */
const handedOut = new Set<number>();

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A TCP port on loopback nobody listens on right now, outside the range of outgoing connections' ports
 * and not handed out before by this process, for a server a test starts (and may stop and start again).
 */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 200; tries++) {
    const port = PORTS_FROM + Math.floor(Math.random() * (PORTS_BELOW - PORTS_FROM));
    if (handedOut.has(port)) continue;
    if (await canListen(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free port between ${PORTS_FROM} and ${PORTS_BELOW} after 200 tries`);
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
