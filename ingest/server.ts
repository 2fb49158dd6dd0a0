// Listening only (STYLE.md): the app is built elsewhere (app.ts); this starts it on HOST:PORT and prints the
// one line on stdout that scripts and tests read: `Timeseal listening on http://HOST:PORT`.
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';

export async function listen(app: FastifyInstance, host: string, port: number, out: NodeJS.WritableStream = process.stdout): Promise<string> {
  await app.listen({ host, port });
  const address = app.server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${shown}:${address.port}`;
  out.write(`Timeseal listening on ${url}\n`);
  return url;
}
