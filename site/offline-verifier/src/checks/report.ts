// The offline verifier's report: rows of plain verdicts ("Verified", "Not verified: <reason>", or information),
// grouped in sections, and the small helpers every kind of input's checks make them with.
export type CheckState = 'ok' | 'fail' | 'pending' | 'info';

export interface Check {
  label: string;
  state: CheckState;
  /** "Verified", "Not verified: <reason>", or for info rows the information itself. */
  verdict: string;
  details?: string[];
  /** A Bitcoin attestation still waiting for its block header: the page offers the Esplora fetch for it. */
  needsHeader?: { height: number };
  /** A receipt whose imprint is another digest than SHA-256 ('SHA-384', 'SHA-512'): the page hashes the document
   *  with it, when it has the file. */
  needsDigest?: string;
}

export interface Section {
  title: string;
  checks: Check[];
  /** The proof as `ots info` prints it. */
  tree?: string;
}

export interface Report {
  summary: { state: 'ok' | 'fail' | 'pending' | 'empty'; text: string };
  sections: Section[];
}

const VERIFIED = 'Verified';
export const ok = (label: string, details?: string[]): Check => ({
  label,
  state: 'ok',
  verdict: VERIFIED,
  ...(details ? { details } : {}),
});
export const fail = (label: string, reason: string, details?: string[]): Check => ({
  label,
  state: 'fail',
  verdict: `Not verified: ${reason}`,
  ...(details ? { details } : {}),
});
export const pending = (label: string, reason: string, details?: string[]): Check => ({
  label,
  state: 'pending',
  verdict: `Not verified: ${reason}`,
  ...(details ? { details } : {}),
});
export const info = (label: string, text: string, details?: string[]): Check => ({
  label,
  state: 'info',
  verdict: text,
  ...(details ? { details } : {}),
});

export function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Runs `fn`; a throw becomes a failed check with core's message as the reason. */
export function attempt(label: string, fn: () => string[] | void): Check {
  try {
    const details = fn();
    return ok(label, details ?? undefined);
  } catch (err) {
    return fail(label, message(err));
  }
}

export function short(hex: string): string {
  return hex.length > 20 ? `${hex.slice(0, 12)}…${hex.slice(-8)}` : hex;
}

export function blockTimeIso(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
}

export const NO_ECDSA = 'no ECDSA P-256 public key: load public.pem';
export const NO_MLDSA = 'no ML-DSA-65 public key: load dilithium_public.key';
