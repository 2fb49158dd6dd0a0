// The offline verifier's size as people read it, in one form wherever it is stated (the build's line, /verify's
// card): "about N KB", N the bytes over 1,000 rounded. Its limit is stated in bytes and KiB (build.ts MAX_BYTES).

/** "about 151 KB" for 151,484 bytes. */
export function verifierSizeText(bytes: number): string {
  return `about ${Math.round(bytes / 1000)} KB`;
}
