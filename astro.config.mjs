// Astro: static output of the public site (site/), React islands, Tailwind. Built into dist/site and served by
// `timeseal serve` (or any static server) with the archive under /ledgers.
import { defineConfig } from 'astro/config';
import react from '@astrojs/react';
import tailwindcss from '@tailwindcss/vite';

export default defineConfig({
  srcDir: './site/src',
  publicDir: './site/public',
  outDir: './dist/site',
  output: 'static',
  trailingSlash: 'ignore',
  integrations: [react()],
  vite: { plugins: [tailwindcss()] },
});
