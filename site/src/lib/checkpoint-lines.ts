// What the verified search needs to check a checkpoint's lines beyond ECDSA and ML-DSA-65 (the log's Ed25519 and
// ML-DSA-44 lines, the witnesses' cosignatures and their policy): one module, loaded on demand as one chunk, so
// that pages which check only the first two lines (the home page's showcase) load none of it.
export { parseVkey, vkeyVerifier } from '../../../core/cosignature.ts';
export { flatWitnessPolicy } from '../../../core/witness-policy.ts';
