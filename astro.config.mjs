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
  vite: {
    plugins: [tailwindcss()],
    environments: {
      client: {
        build: {
          rolldownOptions: {
            output: {
              codeSplitting: {
                // The archive's file names (core/archive-paths.ts, joined to /ledgers/ by lib/archive-url.ts) ride
                // in the chunk of lib/format.ts, which every page that names an archive file loads already: on
                // their own they would be a chunk of some 400 bytes and one more request on five pages.
                groups: [
                  {
                    name: 'format',
                    test: /(?:site[\\/]src[\\/]lib[\\/](?:format|archive-url)|core[\\/]archive-paths)\.ts$/,
                  },
                ],
              },
            },
          },
        },
      },
    },
  },
});
