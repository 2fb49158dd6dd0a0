// GET /ledgers/index-sha256.json: the whole-archive index (docs/FORMAT.md §6; docs/API.md),
// made by the server on request now that the nightly build no longer writes it (it grows with the archive).
// The file for the current index head is made once, into the cache folder (beside the database), and kept
// until a larger head replaces it: one generation at a time in the process, requests for the same tree size
// wait for the same one. Generation streams the segments' shards (pipeline/segment-files.ts, through the
// injected ArchiveAccess of services.ts) and yields to the event loop between chunks, so the server keeps
// answering while it runs; memory does not grow with the archive.
//
// A large archive takes minutes to index (16 min at 100 M hashes), longer than a client waits on a silent
// connection (HTTP_IDLE_TIMEOUT). So a request for a size not made yet starts the generation and, while it
// runs, gets the newest file already made (a complete index of a smaller tree: its `timestamps` and tree-size
// header say which), or, when there is none, waits up to READY_WAIT_MS and is then told to come back
// (IndexJsonPreparingError: 503 with Retry-After). Only the last complete file is kept.
import fs from 'node:fs';
import path from 'node:path';
import { setImmediate } from 'node:timers/promises';
import type { ArchiveAccess } from './services.ts';

const CHUNK_BYTES = 1 << 20;
/** How long a request waits for a generation when no earlier file can stand in for it. */
export const READY_WAIT_MS = 15_000;
const NAME = /^index-sha256-(\d+)\.json$/;

/** No index-sha256.json can be sent yet: the first one is being made. */
export class IndexJsonPreparingError extends Error {
  readonly treeSize: number;

  constructor(treeSize: number) {
    super(`index-sha256.json for ${treeSize} hashes is being prepared`);
    this.treeSize = treeSize;
    this.name = 'IndexJsonPreparingError';
  }
}

/** A made file and the tree size it indexes. */
export interface IndexJsonFile {
  path: string;
  treeSize: number;
}

export class IndexJsonCache {
  private readonly archive: Pick<ArchiveAccess, 'indexHead' | 'indexJson'>;
  private readonly dir: string;
  private running: Promise<unknown> = Promise.resolve();
  private readonly made = new Map<number, Promise<string>>();

  constructor(archive: Pick<ArchiveAccess, 'indexHead' | 'indexJson'>, dir: string) {
    this.archive = archive;
    this.dir = dir;
  }

  /**
   * index-sha256.json for the archive's current head if made, else the newest earlier one while the current
   * one is made; with neither, waits up to `waitMs` for the generation, then throws IndexJsonPreparingError.
   */
  async file(waitMs = READY_WAIT_MS): Promise<IndexJsonFile> {
    const { treeSize } = this.archive.indexHead();
    const file = path.join(this.dir, `index-sha256-${treeSize}.json`);
    if (fs.existsSync(file)) return { path: file, treeSize };
    const making = this.start(treeSize);
    const earlier = this.newestMade(treeSize);
    if (earlier !== undefined) return earlier;
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, waitMs, undefined)));
    try {
      const made = await Promise.race([making, waited]);
      if (made === undefined) throw new IndexJsonPreparingError(treeSize);
      return { path: made, treeSize: Number(NAME.exec(path.basename(made))![1]) };
    } finally {
      clearTimeout(timer);
    }
  }

  /** The newest complete file for a tree smaller than `treeSize`, if any. */
  private newestMade(treeSize: number): IndexJsonFile | undefined {
    let best: IndexJsonFile | undefined;
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      return undefined;
    }
    for (const name of names) {
      const size = Number(NAME.exec(name)?.[1] ?? NaN);
      if (size < treeSize && (best === undefined || size > best.treeSize))
        best = { path: path.join(this.dir, name), treeSize: size };
    }
    return best;
  }

  /** The generation for `treeSize`, started unless under way. */
  private start(treeSize: number): Promise<string> {
    let making = this.made.get(treeSize);
    if (making === undefined) {
      // One generation at a time: a new size waits for the one before it.
      making = this.running.then(() => this.make());
      this.running = making.catch(() => undefined);
      this.made.set(treeSize, making);
      making.finally(() => this.made.delete(treeSize)).catch(() => undefined);
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
      for await (const chunk of this.archive.indexJson(head)) {
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
      if (name.startsWith('index-sha256-') && path.join(this.dir, name) !== file)
        await fs.promises.rm(path.join(this.dir, name), { force: true });
    }
    return file;
  }
}
