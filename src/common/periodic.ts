/**
 * A background task run every `intervalMs`: runs never overlap (a tick while one is running is skipped),
 * a failure goes to `onError` and the next tick tries again, and `stop()` waits for the run in progress.
 * The timer never keeps the process alive.
 */
export class Periodic {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(
    private readonly task: () => Promise<unknown>,
    private readonly onError: (err: unknown) => void,
  ) {}

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.run(), intervalMs);
    this.timer.unref();
  }

  /** One run now, unless one is under way. */
  async run(): Promise<void> {
    if (this.running) return;
    this.running = this.task();
    try {
      await this.running;
    } catch (err) {
      this.onError(err);
    } finally {
      this.running = undefined;
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }
}
