/**
 * A bare Server-Sent Events server for bench:events' baseline: Node's http module and nothing else. On
 * `{ rate, seconds, size }` from its parent it writes one frame of about `size` bytes to every open
 * stream `rate` times a second (each carrying its send time as `timestamp`, as the service's events do)
 * for `seconds`, then answers with the CPU time it spent meanwhile. What the service does per event and
 * stream beyond this is its own cost; this much is any Node process's.
 */
import http from 'node:http';

const streams = new Set<http.ServerResponse>();
const server = http.createServer((req, res) => {
  res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache' });
  res.flushHeaders();
  res.socket?.setNoDelay(true);
  streams.add(res);
  res.once('close', () => streams.delete(res));
});

server.listen(0, '127.0.0.1', () => {
  const address = server.address() as { port: number };
  process.send!({ port: address.port });
});

process.on('message', (message: { rate: number; seconds: number; size: number }) => {
  const { rate, seconds, size } = message;
  const padding = 'x'.repeat(Math.max(0, size - 120));
  const cpu = process.cpuUsage();
  const began = Date.now();
  const total = Math.round(rate * seconds);
  let sent = 0;
  const tick = () => {
    // Open loop: a frame is due every 1000 / rate ms from the start, however long the writes took.
    while (sent < total && Date.now() >= began + (sent * 1000) / rate) {
      sent++;
      const body = JSON.stringify({ event: 'document.validated', timestamp: new Date().toISOString(), padding });
      const frame = Buffer.from(`id: ${sent}\nevent: document.validated\ndata: ${body}\n\n`);
      for (const res of streams) res.write(frame);
    }
    if (sent < total) {
      setTimeout(tick, Math.max(0, began + (sent * 1000) / rate - Date.now()));
      return;
    }
    const used = process.cpuUsage(cpu);
    process.send!({ cpuMs: (used.user + used.system) / 1000, wallMs: Date.now() - began, sent });
  };
  tick();
});
