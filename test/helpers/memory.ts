import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';

// A handle on the collector without restarting the test process with --expose-gc.
v8.setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

/**
 * Two collections: the backing stores of dead Buffers are freed by a sweep that runs beside the program
 * after a collection, and on a loaded machine it may not have run when the collection returns, so spent
 * socket chunks would still count as `arrayBuffers`. The next collection first finishes that sweep.
 */
export function collectGarbage(): void {
  collect();
  collect();
}

/** Live memory of this process (heap and Buffers), after collecting, so garbage does not count. */
export function liveMemory(): number {
  collectGarbage();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}
