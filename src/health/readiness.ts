import { Injectable } from '@nestjs/common';

/** Further readiness probes (storage registers here), keyed by the name shown in /health/ready. */
@Injectable()
export class ReadinessChecks {
  private readonly probes = new Map<string, () => Promise<unknown>>();

  register(name: string, probe: () => Promise<unknown>): void {
    this.probes.set(name, probe);
  }

  extra(): Record<string, () => Promise<unknown>> {
    return Object.fromEntries(this.probes);
  }
}
