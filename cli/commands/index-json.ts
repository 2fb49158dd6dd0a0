// `timeseal index-json [--out FILE]`: writes index-sha256.json (the whole-archive index; docs/FORMAT.md §6) from
// the index segments. It is no longer part of the nightly build (its size grows with the whole archive): the
// server makes it on request; a static deployment (a plain web server or CDN in front of ledgers/) runs this
// as its own step after the build (docs/OPERATIONS.md).
import path from 'node:path';
import type { TimesealCommand } from '../command.ts';
import { INDEX_JSON_PATH } from '../../core/archive.ts';
import type { Context } from '../context.ts';
import { writeMutableChunks } from '../../pipeline/files.ts';
import { formatBytes, output } from '../output.ts';
import { indexJsonFromSegments, readIndexHead } from '../../pipeline/segment-files.ts';

export function registerIndexJson(program: TimesealCommand, ctx: () => Context): void {
  program
    .command('index-json')
    .description("write index-sha256.json (the spec's whole-archive index) from the index segments")
    .option('--out <file>', `where to write it (default: <archive>/${INDEX_JSON_PATH})`)
    .option('--json', 'machine-readable output')
    .act(async (opts: { out?: string; json?: boolean }) => {
      const c = ctx();
      const archive = c.config.archive;
      const out = path.resolve(opts.out ?? path.join(archive, INDEX_JSON_PATH));
      const head = readIndexHead(archive);
      const started = performance.now();
      const bytes = writeMutableChunks(path.dirname(out), path.basename(out), indexJsonFromSegments(archive, head));
      const seconds = (performance.now() - started) / 1000;
      output(!!opts.json).result({ file: out, tree_size: head.treeSize, bytes, seconds }, () => [
        `Wrote ${out}: ${formatBytes(bytes)}, every hash of the ${head.treeSize} leaves (${seconds.toFixed(1)} s).`,
      ]);
      return 'ok';
    });
}
