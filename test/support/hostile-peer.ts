// A hostile HTTP peer on loopback for the tests of the bounded HTTP client (pipeline/http.ts): whatever it is
// asked (GET or POST), it answers in its current mode —
//   huge      200, 512 MiB streamed without a content-length;
//   endless   200, bytes until the client goes away (a safety stop at 4 GiB, for a client that never does);
//   gzip-bomb 200, content-encoding: gzip, ~1 MB on the wire that inflates to 1 GiB of zeros;
//   redirect  307 to the canary (a second loopback server that records every request it gets);
//   trickle   200, one byte every 200 ms, forever.
// Paths under `files` (e.g. /keys/public.pem) are served from a folder instead, so that a command can get past
// its first reads to the file under test. `sent` counts the body bytes the peer managed to write.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import zlib from 'node:zlib';

export type HostileMode = 'huge' | 'endless' | 'gzip-bomb' | 'redirect' | 'trickle';
export const HOSTILE_MODES: HostileMode[] = ['huge', 'endless', 'gzip-bomb', 'redirect', 'trickle'];

export interface HostilePeer {
  url: string;
  mode: HostileMode;
  /** URL prefix -> folder: requests under the prefix get the folder's files (404 when absent). */
  files: Map<string, string>;
  /** Requests answered in the hostile mode. */
  requests: number;
  /** Body bytes written in the hostile mode. */
  sent: number;
  canary: { url: string; requests: string[] };
  stop(): Promise<void>;
}

const MiB = 1 << 20;
const HUGE = 512 * MiB;
const SAFETY_STOP = 4 * 1024 * MiB;

/** 1 GiB of zeros as 1,024 gzip members of 1 MiB each (a valid gzip stream: RFC 1952 §2.2), about 1 MB. */
let bomb: Buffer | undefined;
function gzipBomb(): Buffer {
  if (bomb) return bomb;
  const member = zlib.gzipSync(Buffer.alloc(MiB), { level: 9 });
  bomb = Buffer.concat(Array.from({ length: 1024 }, () => member));
  return bomb;
}

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function close(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

export async function startHostilePeer(mode: HostileMode = 'huge'): Promise<HostilePeer> {
  const canaryRequests: string[] = [];
  const canary = http.createServer((req, res) => {
    canaryRequests.push(`${req.method} ${req.url}`);
    res.writeHead(200, { 'content-type': 'text/plain' }).end('canary: this answer must never reach the client\n');
  });
  const canaryUrl = await listen(canary);
  const chunk = Buffer.alloc(64 * 1024, 0x41);
  const server = http.createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    for (const [prefix, dir] of peer.files) {
      if (!pathname.startsWith(prefix)) continue;
      const file = path.join(dir, pathname.slice(prefix.length));
      if (!file.startsWith(dir + path.sep) || !fs.existsSync(file)) return void res.writeHead(404).end();
      const data = fs.readFileSync(file);
      return void res.writeHead(200, { 'content-length': data.length }).end(data);
    }
    peer.requests++;
    req.resume();
    let open = true;
    res.on('close', () => (open = false));
    let written = 0;
    /** Writes `chunk` until `limit` bytes are written or the client is gone, waiting for the socket to drain. */
    const pour = (limit: number): void => {
      while (open && written < limit) {
        written += chunk.length;
        peer.sent += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', () => pour(limit));
      }
      if (open) res.end();
    };
    switch (peer.mode) {
      case 'huge':
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        return pour(HUGE);
      case 'endless':
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        return pour(SAFETY_STOP);
      case 'gzip-bomb':
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-encoding': 'gzip' });
        peer.sent += gzipBomb().length;
        return void res.end(gzipBomb());
      case 'redirect':
        return void res.writeHead(307, { location: `${canaryUrl}/stolen${req.url ?? ''}` }).end('see the canary\n');
      case 'trickle': {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        const timer = setInterval(() => {
          if (!open) return clearInterval(timer);
          peer.sent++;
          res.write('x');
        }, 200);
        return;
      }
    }
  });
  const peer: HostilePeer = {
    url: await listen(server),
    mode,
    files: new Map(),
    requests: 0,
    sent: 0,
    canary: { url: canaryUrl, requests: canaryRequests },
    stop: async () => {
      await Promise.all([close(server), close(canary)]);
    },
  };
  return peer;
}
