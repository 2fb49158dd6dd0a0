// The sealed disclosure document itself, copied byte for byte into the build output (/sealed-disclosure.md),
// so anyone can hash it and compare with the live proof on /quantum-shield.
import type { APIRoute } from 'astro';
import { sealedDocument } from '../lib/sealed-document.ts';

export const GET: APIRoute = () =>
  new Response(sealedDocument().bytes, { headers: { 'content-type': 'text/markdown; charset=utf-8' } });
