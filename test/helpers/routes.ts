import type { INestApplication } from '@nestjs/common';

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
}

/** Whether the booted app serves `method path` (path written as declared, e.g. `/sign/:id`). */
export function hasRoute(app: INestApplication, method: string, path: string): boolean {
  const instance = app.getHttpAdapter().getInstance() as { router?: { stack: Layer[] }; _router?: { stack: Layer[] } };
  const stack = (instance.router ?? instance._router)?.stack ?? [];
  return stack.some((l) => l.route?.path === path && l.route.methods[method.toLowerCase()]);
}
