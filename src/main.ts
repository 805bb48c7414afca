// Tracing first: its loader hook must see every module the service loads, so the rest comes dynamically.
import './telemetry/register.js';

const { serve } = await import('./serve.js');
await serve();
