import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The UI is built into web/dist and served by the gateway (src/gateway/static.ts), which sets
// the CSP: the build must emit no inline script, which Vite's default output already honours.
export default defineConfig({
  root: import.meta.dirname,
  plugins: [react()],
  logLevel: 'warn',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // No inline modulepreload polyfill: every browser that runs the UI supports modulepreload.
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 1000,
  },
  server: { proxy: { '/api': 'http://127.0.0.1:3000' } },
});
