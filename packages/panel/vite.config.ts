/**
 * @module The panel's build: a static single-page app under /panel/, hashed assets, no inline script
 * (the server's CSP is `script-src 'self'`), nothing from another origin.
 */
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/panel/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // No inline module-preload polyfill: the CSP allows only scripts from the panel's own origin.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
  },
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
});
