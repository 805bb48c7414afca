/**
 * Polls `probe` every `intervalMs` until it returns a truthy value (returned) or `timeoutMs` passes (throws
 * with `what`).
 */
export async function waitUntil<T>(
  probe: () => Promise<T> | T,
  what: string,
  timeoutMs = 15_000,
  intervalMs = 25,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
