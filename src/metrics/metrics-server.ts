import { createServer, type Server } from 'node:http';
import type { AppConfig } from '../config/app-config.js';
import { metricsTokenMatches } from './metrics.controller.js';
import type { MetricsService } from './metrics.service.js';

/**
 * METRICS_PORT: metrics on a port of their own, kept off the public API (and the one HTTP listener of
 * a worker process, whose `GET /health` is then its liveness probe). METRICS_TOKEN still applies when set.
 */
export async function startMetricsServer(config: AppConfig, metrics: MetricsService): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/health') {
      res
        .writeHead(200, { 'Content-Type': 'application/json' })
        .end(JSON.stringify({ status: 'ok', version: config.version }));
      return;
    }
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    const token = config.env.METRICS_TOKEN;
    if (token && !metricsTokenMatches(req.headers.authorization, token)) {
      res.writeHead(401).end();
      return;
    }
    metrics.registry.metrics().then(
      (body) => res.writeHead(200, { 'Content-Type': metrics.registry.contentType }).end(body),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.env.METRICS_PORT, config.env.HOST, () => resolve());
  });
  return server;
}
