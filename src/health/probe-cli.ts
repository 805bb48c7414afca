#!/usr/bin/env node
import { runProbe } from './probe.js';

// The container HEALTHCHECK (docker/Dockerfile): exit 0 healthy, 1 not.
process.exitCode = await runProbe(process.env);
