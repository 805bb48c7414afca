import { AsyncLocalStorage } from 'node:async_hooks';

/** What a log line may say about the request it belongs to. Filled by middleware and the auth step. */
export interface RequestContext {
  requestId: string;
  tenantId?: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

export const requestContext = {
  run<T>(ctx: RequestContext, fn: () => T): T {
    return storage.run(ctx, fn);
  },
  get(): RequestContext | undefined {
    return storage.getStore();
  },
  setTenant(tenantId: string): void {
    const ctx = storage.getStore();
    if (ctx) ctx.tenantId = tenantId;
  },
};
