// timeseal-client, the library: stamp hashes with a Timeseal server, complete the proofs once the day is
// published and anchored, verify them offline. Runs in Node (≥ 20) and in browsers: no node: imports here.
// Every byte it checks is read by Timeseal's core/ (bundled).
export { TimesealClientError, isTemporary, type ClientErrorCode } from './errors.ts';
export { sha256Hex, hashStream, checkHash, type HashStreamOptions } from './hash.ts';
export { normalizeServer, type FetchLike, type HttpOptions } from './http.ts';
export { encodeProofFile, parseProofFile, newProofFile, stageOf, PROOF_SUFFIX } from './proof-file.ts';
export { stamp, MAX_BATCH, type StampOptions, type StampResult, type StampSummary } from './stamp.ts';
export { upgrade, DEFAULT_HEADERS_FROM, type UpgradeOptions, type UpgradeResult } from './upgrade.ts';
export { verify, type VerifyOptions } from './verify.ts';
export { VerifyCache } from './cache.ts';
export {
  stampPdf,
  checkPdf,
  timeStampRequest,
  platformInflate,
  type Inflate,
  type StampPdfOptions,
  type StampedPdf,
  type CheckPdfOptions,
  type PdfPromise,
  type PdfReport,
  type PdfTimeStampReport,
} from './pdf.ts';
export { describeProof } from './info.ts';
export {
  emptyTrust,
  parseTrust,
  encodeTrust,
  pinServer,
  fetchKeyFiles,
  keyFilesFrom,
  type PinResult,
} from './trust.ts';
export {
  PROOF_FILE_FORMAT,
  PROOF_FILE_FORMAT_OMITTED,
  TRUST_FORMAT,
  type BitcoinNetwork,
  type HeaderRecord,
  type KeyFiles,
  type LayerName,
  type LayerReport,
  type LayerStatus,
  type LogMemory,
  type Omission,
  type PinnedServer,
  type ProofFile,
  type ProofInfo,
  type ProofStage,
  type ReadBeside,
  type SeenCheckpoint,
  type TrustData,
  type VerifyReport,
  type VerifyState,
} from './types.ts';
