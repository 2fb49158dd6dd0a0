// GET /ledgers/index-sha256.json: the spec's whole-archive index (product spec §3, §7; docs/FORMAT.md §6),
// made by the server on request now that the nightly build no longer writes it (it grows with the archive).
// The file for the current index head is made once, into the cache folder (beside the database), and kept
// until a larger head replaces it: one generation at a time in the process, requests for the same tree size
// wait for the same one. Generation streams the segments' shards (pipeline/segment-files.ts, through the
// injected ArchiveAccess of services.ts) and yields to the event loop between chunks, so the server keeps
// answering while it runs; memory does not grow with the archive.
import fs from 'node:fs';
import path from 'node:path';
import { setImmediate } from 'node:timers/promises';
import type { ArchiveAccess } from './services.ts';

const CHUNK_BYTES = 1 << 20;

export class IndexJsonCache {
  private readonly archive: Pick<ArchiveAccess, 'indexHead' | 'indexJson'>;
  private readonly dir: string;
  private running: Promise<unknown> = Promise.resolve();
  private readonly made = new Map<number, Promise<string>>();

  constructor(archive: Pick<ArchiveAccess, 'indexHead' | 'indexJson'>, dir: string) {
    this.archive = archive;
    this.dir = dir;
  }

  /** The path of index-sha256.json for the archive's current head, made first if needed. */
  async file(): Promise<string> {
    const head = this.archive.indexHead();
    const file = path.join(this.dir, `index-sha256-${head.treeSize}.json`);
    if (fs.existsSync(file)) return file;
    let making = this.made.get(head.treeSize);
    if (making === undefined) {
      // One generation at a time: a new size waits for the one before it.
      making = this.running.then(() => this.make());
      this.running = making.catch(() => undefined);
      this.made.set(head.treeSize, making);
      making.finally(() => this.made.delete(head.treeSize)).catch(() => undefined);
    }
    return making;
  }

  /** Makes the file for the head as it is now (the archive may have grown while this waited its turn). */
  private async make(): Promise<string> {
    const head = this.archive.indexHead();
    const file = path.join(this.dir, `index-sha256-${head.treeSize}.json`);
    if (fs.existsSync(file)) return file;
    fs.mkdirSync(this.dir, { recursive: true });
    const temp = `${file}.tmp-${process.pid}`;
    const out = await fs.promises.open(temp, 'w');
    try {
      let pending: string[] = [];
      let length = 0;
      for (const chunk of this.archive.indexJson(head)) {
        pending.push(chunk);
        length += chunk.length;
        if (length >= CHUNK_BYTES) {
          await out.write(pending.join(''));
          pending = [];
          length = 0;
          await setImmediate();
        }
      }
      await out.write(pending.join(''));
    } catch (err) {
      await out.close();
      await fs.promises.rm(temp, { force: true });
      throw err;
    }
    await out.close();
    await fs.promises.rename(temp, file);
    for (const name of await fs.promises.readdir(this.dir)) {
      if (name.startsWith('index-sha256-') && path.join(this.dir, name) !== file) await fs.promises.rm(path.join(this.dir, name), { force: true });
    }
    return file;
  }
}
