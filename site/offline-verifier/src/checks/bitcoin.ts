// Bitcoin attestations (OpenTimestamps) and block headers: which header, given or fetched, confirms which
// attestation, each attestation's check (core/bitcoin.ts), a per-hash .ots's path through the day's commitment
// (docs/FORMAT.md §7–§8), and the section of a header given alone.
import {
  blockHash,
  checkProofOfWork,
  parseBlockHeader,
  reversedHex,
  verifyBitcoinAttestation,
  type BitcoinNetwork,
} from '../../../../core/bitcoin.ts';
import { equalBytes, toHex } from '../../../../core/encoding.ts';
import { walkAttestations, type DetachedTimestampFile, type Timestamp } from '../../../../core/ots.ts';
import type { ClassifiedInput } from '../inputs.ts';
import { attempt, blockTimeIso, fail, info, message, ok, pending, type Check, type Section } from './report.ts';

export interface FetchedHeader {
  height: number;
  header: Uint8Array;
  /** The block hash the explorer named for that height (explorer byte order). */
  blockHash: string;
  source: string;
}

export interface BitcoinClaim {
  height: number;
  message: Uint8Array;
}

interface GivenHeader {
  input: ClassifiedInput;
  used: boolean;
}

export class HeaderPool {
  private readonly given: GivenHeader[];
  private readonly fetched: FetchedHeader[];
  readonly claims: BitcoinClaim[];

  constructor(files: ClassifiedInput[], fetched: FetchedHeader[], claims: BitcoinClaim[]) {
    this.given = files.filter((f) => f.kind === 'header').map((input) => ({ input, used: false }));
    this.fetched = fetched;
    this.claims = claims;
    // A header whose merkle root matches no attestation is still given to the one attestation that needs a
    // header, so that a damaged header fails there with the reason, instead of standing alone.
    const heights = new Set(claims.map((c) => c.height));
    const unmatched = this.given.filter((g) => !claims.some((c) => this.matches(g, c)));
    const open = [...heights].filter(
      (h) =>
        !this.fetched.some((f) => f.height === h) &&
        !this.given.some((g) => claims.some((c) => c.height === h && this.matches(g, c))),
    );
    if (unmatched.length === 1 && open.length === 1) this.assigned.set(open[0]!, unmatched[0]!);
  }

  private readonly assigned = new Map<number, GivenHeader>();

  private matches(g: GivenHeader, c: BitcoinClaim): boolean {
    const header = g.input.value;
    return (
      header instanceof Uint8Array && header.length === 80 && equalBytes(parseBlockHeader(header).merkleRoot, c.message)
    );
  }

  /** The header to check an attestation with, if the person gave or fetched one. */
  headerFor(
    claim: BitcoinClaim,
  ): { header?: Uint8Array; problem?: string; expectedHash?: string; source: string } | undefined {
    const fetched = this.fetched.find((f) => f.height === claim.height);
    if (fetched) return { header: fetched.header, expectedHash: fetched.blockHash, source: fetched.source };
    const g = this.given.find((x) => this.matches(x, claim)) ?? this.assigned.get(claim.height);
    if (!g) return undefined;
    g.used = true;
    const value = g.input.value;
    return value instanceof Uint8Array
      ? { header: value, source: g.input.name }
      : { problem: g.input.problem ?? 'not a block header', source: g.input.name };
  }

  unused(): ClassifiedInput[] {
    return this.given.filter((g) => !g.used).map((g) => g.input);
  }
}

export function attestationChecks(d: DetachedTimestampFile, pool: HeaderPool, network: BitcoinNetwork): Check[] {
  const checks: Check[] = [];
  const all = walkAttestations(d.timestamp);
  const pendingUris = all.flatMap((a) => (a.attestation.kind === 'pending' ? [a.attestation.uri] : []));
  const bitcoin = all.filter((a) => a.attestation.kind === 'bitcoin');
  for (const a of bitcoin) {
    const height = (a.attestation as { height: number }).height;
    const label = `Bitcoin block ${height}`;
    const root = reversedHex(a.message);
    const given = pool.headerFor({ height, message: a.message });
    if (!given) {
      checks.push({
        ...pending(label, `needs the block header at height ${height}: paste or drop it, or fetch it below`, [
          `Merkle root to compare (as explorers print it): ${root}`,
        ]),
        needsHeader: { height },
      });
      continue;
    }
    if (given.header === undefined) {
      checks.push({ ...fail(label, `block header ${given.source}: ${given.problem}`), needsHeader: { height } });
      continue;
    }
    try {
      const v = verifyBitcoinAttestation(a.message, height, given.header, given.expectedHash, network);
      checks.push(
        ok(label, [
          `Block time ${blockTimeIso(v.time)}`,
          `Block hash ${v.blockHash}`,
          `Merkle root ${v.merkleRoot}`,
          `Header from ${given.source}`,
          ...(network === 'mainnet'
            ? []
            : [`Checked against the ${network} proof-of-work limit (a test network, not Bitcoin)`]),
        ]),
      );
    } catch (err) {
      checks.push({
        ...fail(label, message(err), [`Merkle root to compare (as explorers print it): ${root}`]),
        needsHeader: { height },
      });
    }
  }
  if (pendingUris.length > 0) {
    const list = pendingUris.map((u) => `Pending at ${u}`);
    if (bitcoin.length === 0) {
      checks.push(
        pending(
          'Bitcoin anchor',
          'not in Bitcoin yet, the calendars below have not been asked for an upgrade in this file',
          list,
        ),
      );
    } else {
      checks.push(
        info(
          'Calendars',
          `${pendingUris.length} pending calendar${pendingUris.length > 1 ? 's' : ''} (not needed: Bitcoin already confirms it)`,
          list,
        ),
      );
    }
  }
  if (bitcoin.length === 0 && pendingUris.length === 0)
    checks.push(fail('Bitcoin anchor', 'the proof has no Bitcoin or pending attestation'));
  for (const a of all) {
    if (a.attestation.kind === 'unknown')
      checks.push(info('Other attestation', `unknown notary ${toHex(a.attestation.tag)} (not checked)`));
  }
  return checks;
}

function findNode(t: Timestamp, test: (node: Timestamp) => boolean): Timestamp | undefined {
  const stack = [t];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (test(node)) return node;
    for (const b of node.ops) stack.push(b.timestamp);
  }
  return undefined;
}

/** docs/FORMAT.md §7–§8: a per-hash .ots reaches the checkpoint root R, then appends F (the ledger file's SHA-256). */
export function commitsToDay(d: DetachedTimestampFile, root: Uint8Array, ledgerSha256: Uint8Array): boolean {
  const atRoot = findNode(d.timestamp, (n) => equalBytes(n.message, root));
  return (
    atRoot !== undefined && atRoot.ops.some((b) => b.op.kind === 'append' && equalBytes(b.op.argument, ledgerSha256))
  );
}

export function headerSection(input: ClassifiedInput, pool: HeaderPool, network: BitcoinNetwork): Section {
  const title = `Block header ${input.name}`;
  const header = input.value;
  if (!(header instanceof Uint8Array))
    return { title, checks: [fail('Block header', input.problem ?? 'not a block header')] };
  const h = parseBlockHeader(header);
  const checks: Check[] = [
    info('Block', `hash ${blockHash(header)}`, [
      `Block time ${blockTimeIso(h.time)}`,
      `Merkle root ${reversedHex(h.merkleRoot)}`,
    ]),
    attempt('Proof of work', () => void checkProofOfWork(header, network)),
  ];
  checks.push(
    pool.claims.length === 0
      ? pending('Confirms an attestation', 'add the .ots file (or proof bundle) this block should confirm')
      : fail(
          'Confirms an attestation',
          `its merkle root ${reversedHex(h.merkleRoot)} is not the message of any Bitcoin attestation given`,
        ),
  );
  return { title, checks };
}
