// A transparency-log witness on loopback, written here from c2sp.org/tlog-witness (add-checkpoint) for the
// tests: real HTTP, its own state (the latest size and root it cosigned for each origin), the checks the spec
// asks for in its order — 404 unknown origin, 403 no valid signature from the log's key, 400 old size above the
// checkpoint's, 409 (text/x.tlog.size) when the old size is not the one it cosigned, 422 for an empty tree with
// a wrong root, a proof from size 0, a failing consistency proof or another root at the same size (a fork) —
// and a cosignature line (ML-DSA-44 or Ed25519, timestamp now) once they pass. Misbehaviours for tests: `down`
// (connections refused), `wrong-checkpoint` (cosigns another checkpoint), `garbage`, `future` (a valid cosignature
// dated 2^53 - 1 seconds).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ed25519CosignatureSigner,
  ed25519PublicKey,
  encodeVkey,
  mldsa44CosignatureSigner,
  mldsa44PublicKey,
  NOTE_TYPE_ED25519_COSIGNATURE,
  NOTE_TYPE_MLDSA44_COSIGNATURE,
} from '../../core/cosignature.ts';
import { encodeCheckpoint, parseCheckpoint } from '../../core/checkpoint.ts';
import { equalBytes, fromBase64 } from '../../core/encoding.ts';
import { sha256 } from '../../core/hash.ts';
import { verifyConsistency } from '../../core/merkle.ts';
import { signNote, verifyNoteSignatures, type NoteVerifier } from '../../core/note.ts';

export type WitnessMode = 'ok' | 'wrong-checkpoint' | 'garbage' | 'future';

export interface LoopbackWitness {
  name: string;
  url: string;
  /** `<vkey> <url>`, one entry of TIMESEAL_WITNESSES. */
  setting: string;
  vkey: string;
  mode: WitnessMode;
  /** Every request's status, in order. */
  statuses: number[];
  /** What it has cosigned, per origin. */
  state: Map<string, { size: number; root: Uint8Array }>;
  stop(): Promise<void>;
  /** Listens again on the same port (after stop), keeping its state. */
  restart(): Promise<void>;
}

export async function startWitness(options: {
  name: string;
  seed: Uint8Array;
  algorithm: 'ML-DSA-44' | 'Ed25519';
  logs: Map<string, NoteVerifier[]>;
  port?: number;
}): Promise<LoopbackWitness> {
  const { name, seed, algorithm, logs } = options;
  const now = (): number => (witness.mode === 'future' ? Number.MAX_SAFE_INTEGER : Math.floor(Date.now() / 1000));
  const signer =
    algorithm === 'ML-DSA-44' ? mldsa44CosignatureSigner(name, seed, now) : ed25519CosignatureSigner(name, seed, now);
  const vkey =
    algorithm === 'ML-DSA-44'
      ? encodeVkey(name, NOTE_TYPE_MLDSA44_COSIGNATURE, mldsa44PublicKey(seed))
      : encodeVkey(name, NOTE_TYPE_ED25519_COSIGNATURE, ed25519PublicKey(seed));
  const state = new Map<string, { size: number; root: Uint8Array }>();
  const statuses: number[] = [];
  let server: http.Server;
  const witness = { name, vkey, mode: 'ok' as WitnessMode, statuses, state } as LoopbackWitness;

  const answer = (res: http.ServerResponse, status: number, body: string, type = 'text/plain; charset=utf-8'): void => {
    statuses.push(status);
    res.writeHead(status, { 'content-type': type });
    res.end(body);
  };
  const handle = (body: string, res: http.ServerResponse): void => {
    const blank = body.indexOf('\n\n');
    if (blank < 0) return answer(res, 400, 'no blank line after the proof\n');
    const head = body.slice(0, blank).split('\n');
    const note = body.slice(blank + 2);
    const old = /^old (0|[1-9]\d*)$/.exec(head[0] ?? '');
    if (old === null) return answer(res, 400, 'first line must be "old <size>"\n');
    const proof = head.slice(1).map((l) => fromBase64(l, 'proof line'));
    if (proof.length > 63 || proof.some((p) => p.length !== 32))
      return answer(res, 400, 'bad consistency proof lines\n');
    let checkpoint: ReturnType<typeof parseCheckpoint>;
    try {
      checkpoint = parseCheckpoint(note.slice(0, note.indexOf('\n\n') + 1));
    } catch {
      return answer(res, 400, 'not a checkpoint\n');
    }
    const keys = logs.get(checkpoint.origin);
    if (keys === undefined) return answer(res, 404, 'unknown origin\n');
    try {
      verifyNoteSignatures(note, keys);
    } catch {
      return answer(res, 403, 'no valid signature from the log\n');
    }
    const oldSize = Number(old[1]);
    if (oldSize > checkpoint.size) return answer(res, 400, 'old size above the checkpoint size\n');
    const known = state.get(checkpoint.origin) ?? { size: 0, root: sha256(new Uint8Array(0)) };
    if (oldSize !== known.size) return answer(res, 409, `${known.size}\n`, 'text/x.tlog.size');
    if (checkpoint.size === 0 && !equalBytes(checkpoint.root, sha256(new Uint8Array(0))))
      return answer(res, 422, 'an empty tree has the empty root\n');
    if (oldSize === 0 && proof.length > 0) return answer(res, 422, 'no proof from the empty tree\n');
    if (oldSize === checkpoint.size) {
      if (!equalBytes(known.root, checkpoint.root)) return answer(res, 422, 'another root at the same size: fork\n');
    } else if (oldSize > 0) {
      try {
        verifyConsistency(oldSize, checkpoint.size, proof, known.root, checkpoint.root);
      } catch {
        return answer(res, 422, 'consistency proof does not verify\n');
      }
    }
    state.set(checkpoint.origin, { size: checkpoint.size, root: checkpoint.root });
    if (witness.mode === 'garbage') return answer(res, 200, 'not a signature\n');
    const signed = witness.mode === 'wrong-checkpoint' ? { ...checkpoint, root: sha256(checkpoint.root) } : checkpoint;
    const text = encodeCheckpoint(signed);
    return answer(res, 200, signNote(text, [signer]).slice(text.length + 1));
  };

  const listen = (port: number): Promise<number> =>
    new Promise((resolve) => {
      server = http.createServer((req, res) => {
        if (req.method !== 'POST' || req.url !== '/add-checkpoint') return answer(res, 404, 'not found\n');
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => handle(Buffer.concat(chunks).toString('utf8'), res));
      });
      server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
    });
  const port = await listen(options.port ?? 0);
  witness.url = `http://127.0.0.1:${port}`;
  witness.setting = `${vkey} ${witness.url}`;
  witness.stop = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  witness.restart = async () => {
    await listen(port);
  };
  return witness;
}
