import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { createSignThreads, type SignThreads, type ThreadSignOptions } from '../sdf/index.js';

/**
 * The signing job's `signArchive()` on threads of this process (SIGN_THREADS), started on first use and
 * ended on shutdown, so signing runs beside the event loop instead of on it.
 */
@Injectable()
export class SigningThreadsService implements OnApplicationShutdown {
  private threads: SignThreads | undefined;

  constructor(@Inject(AppConfig) private readonly config: AppConfig) {}

  sign(archive: Buffer, options: ThreadSignOptions): Promise<Buffer> {
    return this.started().sign(archive, options);
  }

  /** Reads the file at `path` and writes it signed to `output` on the thread (see `SignThreads`). */
  signToFile(path: string, options: ThreadSignOptions, output: string): Promise<{ size: number }> {
    return this.started().signToFile(path, options, output);
  }

  private started(): SignThreads {
    return (this.threads ??= createSignThreads(this.config.env.SIGN_THREADS));
  }

  async onApplicationShutdown(): Promise<void> {
    const threads = this.threads;
    this.threads = undefined;
    await threads?.destroy();
  }
}
