/**
 * The container health probe, by role (docker/Dockerfile HEALTHCHECK): an API process (PROCESS_ROLE api
 * or all) is probed at GET /health on PORT; a worker process has no API listener and is probed at
 * GET /health on METRICS_PORT, which it serves when that is set. Exit 0 healthy, 1 not.
 */
export function probeUrl(env: NodeJS.ProcessEnv): string | { error: string } {
  const role = env.PROCESS_ROLE ?? 'all';
  if (role === 'worker') {
    if (!env.METRICS_PORT) return { error: 'a worker is probed on METRICS_PORT, which is not set' };
    return `http://127.0.0.1:${env.METRICS_PORT}/health`;
  }
  return `http://127.0.0.1:${env.PORT ?? '3000'}/health`;
}

export async function runProbe(env: NodeJS.ProcessEnv): Promise<number> {
  const url = probeUrl(env);
  if (typeof url !== 'string') {
    process.stderr.write(`unhealthy: ${url.error}\n`);
    return 1;
  }
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2500) });
    return res.ok ? 0 : 1;
  } catch (err) {
    process.stderr.write(`unhealthy: ${url}: ${(err as Error).message}\n`);
    return 1;
  }
}
