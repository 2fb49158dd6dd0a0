// One origin on a development server: without TIMESEAL_ORIGIN, links (e-mails
// included) use http://localhost:PORT, but the server listens on 127.0.0.1 and people open either; a session
// made on one is not sent to the other, so a login did not carry over from an e-mail link. When TIMESEAL_ORIGIN
// is unset, a browser's page navigation (Accept: text/html, GET or HEAD, not /api/) to a loopback address on the
// origin's port is redirected (302) to the same path on the origin, the address the start banner names.
// Scripts (fetch, curl: no text/html) and every server with TIMESEAL_ORIGIN set are never redirected.
import type { FastifyReply, FastifyRequest } from 'fastify';

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|\[::1\])$/;

export function devOriginRedirect(
  origin: string,
): (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply | undefined> {
  const target = new URL(origin);
  const port = target.port || (target.protocol === 'https:' ? '443' : '80');
  const base = origin.replace(/\/+$/, '');
  return async (request, reply) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return undefined;
    if (request.url.startsWith('/api/')) return undefined;
    if (!String(request.headers.accept ?? '').includes('text/html')) return undefined;
    const host = request.headers.host;
    if (typeof host !== 'string') return undefined;
    const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(host);
    if (!m || !LOOPBACK.test(m[1]!) || (m[2] ?? '80') !== port) return undefined;
    return reply.code(302).header('Location', `${base}${request.url}`).header('Cache-Control', 'no-store').send();
  };
}
