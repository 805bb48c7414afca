import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

/**
 * The web front end, served by the service at /app/. The format core (src/sdf) is bundled as it is;
 * the few Node modules it uses are replaced by small browser adapters in src/shims.
 */
export default defineConfig({
  root: here('.'),
  base: '/app/',
  publicDir: false,
  resolve: {
    alias: {
      'node:zlib': here('src/shims/zlib.ts'),
      'node:crypto': here('src/shims/crypto.ts'),
      'node:fs': here('src/shims/unavailable.ts'),
      'node:util': here('src/shims/unavailable.ts'),
    },
  },
  oxc: { jsx: { runtime: 'automatic' } },
  worker: { format: 'es' },
  build: {
    outDir: here('../dist/web'),
    emptyOutDir: true,
    target: 'es2023',
    sourcemap: false,
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 2048,
    rolldownOptions: {
      // React Query marks its modules "use client" for server components; a browser bundle has none.
      onwarn(warning, warn) {
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE') return;
        warn(warning);
      },
    },
  },
});
