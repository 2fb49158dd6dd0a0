// Every JSON error body carries `message` (docs/API.md, "Errors"): the site's client shows the error
// body's `message` (login, signup, checkout, verification, reset, the waitlist), while the API has always
// answered `{"error": …}`. One preSerialization hook on the root app copies `error` into `message` on every
// answer with status ≥ 400 whose body is an object with a string `error` and no `message` of its own, so no
// route or error handler can forget it; `error` stays for existing clients. The shared error schemas
// (schemas.ts) list `message`, so the serializer keeps it.
import type { FastifyReply, FastifyRequest } from 'fastify';

export async function addErrorMessage(
  _request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
): Promise<unknown> {
  if (reply.statusCode < 400 || payload === null || typeof payload !== 'object' || Array.isArray(payload))
    return payload;
  const body = payload as Record<string, unknown>;
  if (typeof body.error !== 'string' || 'message' in body) return payload;
  return { ...body, message: body.error };
}
