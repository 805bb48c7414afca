import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { createSignThreads, type SignOptions, type SignThreads } from '../sdf/index.js';

/**
 * The signing job's `signArchive()` on threads of this process (SIGN_THREADS), started on first use and
 * ended on shutdown, so signing runs beside the event loop instead of on it.
 */
@Injectable()
export class SigningThreadsService implements OnApplicationShutdown {
  private threads: SignThreads | undefined;

  constructor(@Inject(AppConfig) private readonly config: AppConfig) {}

  sign(archive: Buffer, options: SignOptions): Promise<Buffer> {
    this.threads ??= createSignThreads(this.config.env.SIGN_THREADS);
    return this.threads.sign(archive, options);
  }

  async onApplicationShutdown(): Promise<void> {
    const threads = this.threads;
    this.threads = undefined;
    await threads?.destroy();
  }
}
