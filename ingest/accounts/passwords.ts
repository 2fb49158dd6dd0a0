// Password hashing with scrypt (RFC 7914) from node:crypto. Parameters N = 2^15, r = 8, p = 1 (OWASP's
// scrypt minimum for interactive logins), a 16-byte random salt and a 64-byte key, stored as
// `scrypt$N$r$p$salt$hash` (base64url), so the parameters can be raised later and old hashes still verify.
// Comparison is constant-time (crypto.timingSafeEqual).
import crypto from 'node:crypto';

export const SCRYPT_N = 2 ** 15;
export const SCRYPT_R = 8;
export const SCRYPT_P = 1;

/** The scrypt cost new hashes are made with; verification reads the cost stored in each hash. */
export interface PasswordCost {
  n: number;
  r: number;
  p: number;
}
/** The production cost (above). The accounts configuration carries it; in-process tests may lower it. */
export const PRODUCTION_COST: PasswordCost = { n: SCRYPT_N, r: SCRYPT_R, p: SCRYPT_P };
const SALT_BYTES = 16;
const KEY_BYTES = 64;
/** The product's password minimum: 8 characters. Our maximum keeps one hash cheap to compute. */
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 256;

function derive(password: string, salt: Buffer, n: number, r: number, p: number, keyLength: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // scrypt needs 128·N·r bytes (32 MiB here); Node's default maxmem is exactly 32 MiB, so allow twice that.
    crypto.scrypt(password.normalize('NFC'), salt, keyLength, { N: n, r, p, maxmem: 256 * n * r }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

export async function hashPassword(password: string, cost: PasswordCost = PRODUCTION_COST): Promise<string> {
  const salt = crypto.randomBytes(SALT_BYTES);
  const key = await derive(password, salt, cost.n, cost.r, cost.p, KEY_BYTES);
  return `scrypt$${cost.n}$${cost.r}$${cost.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/**
 * A well-formed hash of a random password at `cost`: verified against when the user does not exist, so that
 * timing does not tell which names exist. One per cost, made once.
 */
const dummies = new Map<string, Promise<string>>();
export function dummyHash(cost: PasswordCost = PRODUCTION_COST): Promise<string> {
  const key = `${cost.n}$${cost.r}$${cost.p}`;
  let dummy = dummies.get(key);
  if (dummy === undefined) dummies.set(key, (dummy = hashPassword(crypto.randomBytes(16).toString('hex'), cost)));
  return dummy;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [n, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  const salt = Buffer.from(parts[4]!, 'base64url');
  const expected = Buffer.from(parts[5]!, 'base64url');
  if (
    !Number.isInteger(n) ||
    n < 2 ||
    n > 2 ** 20 ||
    !(r >= 1 && r <= 32) ||
    !(p >= 1 && p <= 16) ||
    expected.length < 32
  )
    return false;
  const actual = await derive(password, salt, n, r, p, expected.length);
  return crypto.timingSafeEqual(actual, expected);
}
