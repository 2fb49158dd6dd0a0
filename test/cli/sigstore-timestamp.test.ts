// Sigstore's timestamp API on a real `timeseal serve` (ingest/routes/sigstore-timestamp.ts; docs/API.md
// "Sigstore's timestamp API"), checked with Sigstore's own libraries and Debian's OpenSSL, offline:
// - sigstore-js's @sigstore/sign signs a message with a local P-256 key (a custom Signer with a public-key
//   hint: no identity provider, no Fulcio) and its TSAWitness (no transparency log) gets Timeseal's token into
//   the bundle, at the URL the SigningConfig of docs/API.md names; @sigstore/verify accepts the bundle against
//   the TrustedRoot the server publishes (/keys/sigstore-trusted-root.json, read with protobuf-specs'
//   TrustedRoot.fromJSON) with a timestamp threshold of 1, and refuses a changed artifact and two wrong roots
//   (another TSA's chain; Timeseal's certificate under another root); `openssl ts -verify` accepts the token;
// - the JSON and DER error answers as sigstore/timestamp-authority gives them (status, content type,
//   {"code", "message"}, its sentences), worked out from its source (pkg/api/timestamp.go, error.go,
//   go-openapi's validation and ServeError);
// - after the day's build (`timeseal ledger build` with the clock moved) each token's imprint is a leaf of the
//   day's ledger at the token's genTime (`timeseal receipt check` says KEPT of one), and a server whose clock is
//   on the published day refuses with 503 and Retry-After (the admission path POST /tsa shares).
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { SigningConfig, TrustedRoot } from '@sigstore/protobuf-specs';
import { MessageSignatureBundleBuilder, TSAWitness, type Signer } from '@sigstore/sign';
import { toSignedEntity, toTrustMaterial, Verifier } from '@sigstore/verify';
import * as pkijs from 'pkijs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { projectEnv, ROOT, startServer, type SpawnedServer } from '../../ingest/test/fixture.ts';
import { removeTempProjects, run, tempProject } from './helpers.ts';

afterAll(() => removeTempProjects());

const DAY = '2025-11-02';
const NOW = `${DAY}T12:00:00.250Z`;
/** The genTime of this route's tokens: NOW's whole second, as the reference's (a fraction of .25 breaks sigstore-js). */
const GEN_TIME = `${DAY}T12:00:00.000Z`;
const MESSAGE = Buffer.from('the release that is signed and time-stamped\n');
const HINT = 'release-key';
const sha256 = (data: Uint8Array): Buffer => crypto.createHash('sha256').update(data).digest();
const derOf = (pem: string): Buffer[] =>
  [...pem.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)].map(
    (m) => new crypto.X509Certificate(m[0]).raw,
  );

/** The SigningConfig of docs/API.md, pointed at `origin`. */
function documentedSigningConfig(origin: string): SigningConfig {
  const api = fs.readFileSync(path.join(ROOT, 'docs/API.md'), 'utf8');
  const block = /"mediaType": "application\/vnd\.dev\.sigstore\.signingconfig[\s\S]*?\n}\n/.exec(api);
  expect(block, 'docs/API.md holds a SigningConfig').not.toBeNull();
  return SigningConfig.fromJSON(JSON.parse(`{\n${block![0]}`.replaceAll('https://timeseal.example', origin)));
}

describe("Sigstore's timestamp API on a running timeseal serve", () => {
  let dir: string;
  let other: string;
  let env: Record<string, string>;
  let server: SpawnedServer | undefined;
  let root: TrustedRoot;
  /** What each granted request put in the ledger: the hash, and the token's genTime. */
  const stored: Array<{ hash: string; genTime: Date }> = [];
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const keyFinder = (hint: string) => {
    if (hint !== HINT) throw new Error(`no key ${hint}`);
    return { publicKey, validFor: () => true };
  };
  const signer: Signer = {
    sign: async (data) => ({
      signature: crypto.sign('sha256', data, privateKey),
      key: { $case: 'publicKey', publicKey: publicPem, hint: HINT },
    }),
  };
  const stop = async () => {
    if (server && server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    server = undefined;
  };
  /** The token's genTime, its certificates and nonce, read with pkijs. */
  const token = (tsr: Uint8Array) => {
    const resp = pkijs.TimeStampResp.fromBER(Uint8Array.from(tsr));
    const signed = new pkijs.SignedData({ schema: resp.timeStampToken!.content });
    const info = pkijs.TSTInfo.fromBER(signed.encapContentInfo.eContent!.getValue());
    return {
      genTime: info.genTime,
      certificates: signed.certificates?.length ?? 0,
      nonce: info.nonce === undefined ? undefined : Buffer.from(info.nonce.valueBlock.valueHexView).toString('hex'),
      imprint: Buffer.from(info.messageImprint.hashedMessage.getValue()).toString('hex'),
    };
  };
  const post = async (body: string | Uint8Array, headers: Record<string, string>) => {
    const res = await fetch(`${server!.url}/api/v1/timestamp`, {
      method: 'POST',
      headers,
      body: typeof body === 'string' ? body : Uint8Array.from(body),
    });
    return { res, body: Buffer.from(await res.arrayBuffer()) };
  };
  const postJson = (request: unknown) =>
    post(typeof request === 'string' ? request : JSON.stringify(request), { 'content-type': 'application/json' });
  const openssl = (args: string[], input?: Uint8Array): string =>
    execFileSync('openssl', args, { cwd: dir, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'], input });

  beforeAll(async () => {
    dir = tempProject('sigstore');
    other = tempProject('sigstore-other');
    env = projectEnv(dir, { LOG_FORMAT: 'json' });
    // The certificates are valid from the project's clock (a minute before it): the day's tokens fall inside.
    for (const d of [dir, other]) {
      const init = run(d, ['keys', 'init'], { env: { ...projectEnv(d), TIMESEAL_NOW: `${DAY}T00:00:00.000Z` } });
      expect(init.code, init.stderr).toBe(0);
    }
    server = await startServer(dir, { ...env, TIMESEAL_NOW: NOW });
  }, 60_000);
  afterAll(stop);

  test('the TrustedRoot at /keys/sigstore-trusted-root.json names the TSA, its chain and its start', async () => {
    const res = await fetch(`${server!.url}/keys/sigstore-trusted-root.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const json = await res.json();
    expect(json.mediaType).toBe('application/vnd.dev.sigstore.trustedroot+json;version=0.1');
    root = TrustedRoot.fromJSON(json);
    expect(root.timestampAuthorities).toHaveLength(1);
    const [tsa] = root.timestampAuthorities;
    expect(tsa!.subject).toEqual({ organization: 'timeseal.test', commonName: 'Timeseal TSA root' });
    expect(tsa!.uri).toBe('https://timeseal.test/api/v1/timestamp');
    const chain = derOf(fs.readFileSync(path.join(dir, 'keys/timeseal-tsa.pem'), 'utf8'));
    expect(chain).toHaveLength(2);
    expect(tsa!.certChain!.certificates.map((c) => c.rawBytes)).toEqual(chain);
    expect(tsa!.validFor!.start).toEqual(new crypto.X509Certificate(chain[0]!).validFromDate);
    expect(tsa!.validFor!.end).toBeUndefined();
  });

  test('@sigstore/sign with its TSA witness, configured by the SigningConfig of docs/API.md, gets a token that @sigstore/verify accepts from the published root (timestamp threshold 1) and openssl ts -verify accepts', async () => {
    const config = documentedSigningConfig(server!.url);
    expect(config.tsaUrls).toHaveLength(1);
    expect(config.tsaUrls[0]!.majorApiVersion).toBe(1);
    const builder = new MessageSignatureBundleBuilder({
      signer,
      witnesses: [new TSAWitness({ tsaBaseURL: config.tsaUrls[0]!.url, retry: 0, timeout: 10_000 })],
    });
    const bundle = await builder.create({ data: MESSAGE });
    expect(bundle.verificationMaterial.tlogEntries).toEqual([]);
    const timestamps = bundle.verificationMaterial.timestampVerificationData!.rfc3161Timestamps;
    expect(timestamps).toHaveLength(1);
    const tsr = timestamps[0]!.signedTimestamp;
    const signature = bundle.content.$case === 'messageSignature' ? bundle.content.messageSignature.signature : null;
    const read = token(tsr);
    expect(read.imprint).toBe(sha256(signature!).toString('hex'));
    expect(read.genTime.toISOString()).toBe(GEN_TIME);
    expect(read.certificates).toBe(0); // sigstore-js asks without `certificates`: the chain comes from the root

    const verifier = new Verifier(toTrustMaterial(root, keyFinder), {
      timestampThreshold: 1,
      tlogThreshold: 0,
      ctlogThreshold: 0,
    });
    const verified = verifier.verify(toSignedEntity(bundle, MESSAGE));
    expect(verified.key).toBe(publicKey);
    console.log(
      `[@sigstore/verify] the bundle with Timeseal's token: accepted (timestampThreshold 1, signer key found)`,
    );

    fs.writeFileSync(path.join(dir, 'sigstore.tsr'), tsr);
    const openSslVerify = openssl([
      'ts',
      '-verify',
      '-digest',
      read.imprint,
      '-in',
      'sigstore.tsr',
      '-CAfile',
      'keys/timeseal-tsa-root.pem',
      '-untrusted',
      'keys/timeseal-tsa.pem',
    ]);
    expect(openSslVerify).toMatch(/^Verification: OK$/m);
    console.log(`[openssl ts -verify sigstore.tsr] ${openSslVerify.trim().split('\n').join(' | ')}`);
    stored.push({ hash: read.imprint, genTime: read.genTime });

    // A changed artifact fails; so does a root whose TSA is another one, or Timeseal's certificate under another root.
    const refusal = (verify: () => unknown): string => {
      try {
        verify();
      } catch (err) {
        return (err as Error).message;
      }
      return 'accepted';
    };
    const changed = refusal(() => verifier.verify(toSignedEntity(bundle, Buffer.from('another release\n'))));
    expect(changed).toMatch(/signature verification failed|does not match/);
    console.log(`[@sigstore/verify] a changed artifact: ${changed}`);
    const otherChain = derOf(fs.readFileSync(path.join(other, 'keys/timeseal-tsa.pem'), 'utf8'));
    const ourChain = root.timestampAuthorities[0]!.certChain!.certificates.map((c) => c.rawBytes);
    for (const [name, chain] of [
      ['another TSA', otherChain],
      ["Timeseal's certificate under another root", [ourChain[0]!, otherChain[1]!]],
    ] as const) {
      const wrong = TrustedRoot.fromJSON(TrustedRoot.toJSON(root));
      wrong.timestampAuthorities[0]!.certChain = { certificates: chain.map((rawBytes) => ({ rawBytes })) };
      const said = refusal(() =>
        new Verifier(toTrustMaterial(wrong, keyFinder), {
          timestampThreshold: 1,
          tlogThreshold: 0,
          ctlogThreshold: 0,
        }).verify(toSignedEntity(bundle, MESSAGE)),
      );
      expect(said, name).toMatch(/timestamp could not be verified/);
      console.log(`[@sigstore/verify] ${name}: ${said}`);
    }
  });

  test('a JSON request with certificates and a 40-digit nonce: the token holds both, the nonce exactly', async () => {
    const digest = sha256(Buffer.from('json request'));
    const nonce = '1234567890123456789012345678901234567890';
    const { res, body } = await postJson(
      `{"artifactHash":"${digest.toString('base64')}","hashAlgorithm":"SHA256","certificates":true,"nonce":${nonce}}`,
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/timestamp-reply');
    expect(res.headers.get('cache-control')).toBe(
      'no-cache, no-store, no-transform, must-revalidate, private, max-age=0',
    );
    const read = token(body);
    expect(read.certificates).toBe(2);
    fs.writeFileSync(path.join(dir, 'json.tsr'), body);
    expect(BigInt(`0x${read.nonce}`).toString()).toBe(nonce);
    expect(read.imprint).toBe(digest.toString('hex'));
    stored.push({ hash: read.imprint, genTime: read.genTime });
  });

  test('application/timestamp-query: an openssl ts -query request gets a token openssl verifies against the query', async () => {
    fs.writeFileSync(path.join(dir, 'doc.txt'), 'a document time-stamped over DER\n');
    openssl(['ts', '-query', '-data', 'doc.txt', '-sha512', '-cert', '-out', 'doc.tsq']);
    const { res, body } = await post(fs.readFileSync(path.join(dir, 'doc.tsq')), {
      'content-type': 'application/timestamp-query',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/timestamp-reply');
    fs.writeFileSync(path.join(dir, 'doc.tsr'), body);
    const verified = openssl([
      'ts',
      '-verify',
      '-queryfile',
      'doc.tsq',
      '-in',
      'doc.tsr',
      '-CAfile',
      'keys/timeseal-tsa-root.pem',
    ]);
    expect(verified).toMatch(/^Verification: OK$/m);
    console.log(`[openssl ts -verify -queryfile doc.tsq] ${verified.trim().split('\n').join(' | ')}`);
    // A SHA-512 imprint's leaf is the SHA-256 of the token's TSTInfo, as on POST /tsa.
    const resp = pkijs.TimeStampResp.fromBER(Uint8Array.from(body));
    const signed = new pkijs.SignedData({ schema: resp.timeStampToken!.content });
    const info = Buffer.from(signed.encapContentInfo.eContent!.getValue());
    stored.push({ hash: sha256(info).toString('hex'), genTime: token(body).genTime });
  });

  const digest32 = Buffer.alloc(32, 7).toString('base64');
  const timestampReply = 'application/timestamp-reply';
  const json = 'application/json';
  test.each<[string, () => Promise<{ res: Response; body: Buffer }>, number, string, RegExp]>([
    [
      'bad base64',
      () => postJson({ artifactHash: 'not*base64*encoded', hashAlgorithm: 'sha256' }),
      400,
      timestampReply,
      /^Error generating timestamp response\. artifactHash must be the digest in standard base64/,
    ],
    [
      'an unsupported hash algorithm',
      () => postJson({ artifactHash: digest32, hashAlgorithm: 'md5' }),
      400,
      timestampReply,
      /^Error generating timestamp response\. unsupported hash algorithm: "md5"/,
    ],
    [
      'SHA-1',
      () => postJson({ artifactHash: Buffer.alloc(20).toString('base64'), hashAlgorithm: 'sha1' }),
      400,
      timestampReply,
      /^Weak hash algorithm in timestamp request\./,
    ],
    [
      'a digest of the wrong length',
      () => postJson({ artifactHash: digest32, hashAlgorithm: 'sha512' }),
      400,
      timestampReply,
      /^Message digest has incorrect length for specified algorithm\. A SHA-512 imprint is 64 bytes; this one is 32\./,
    ],
    [
      'another policy',
      () => postJson({ artifactHash: digest32, hashAlgorithm: 'sha256', tsaPolicyOID: '1.3.6.1.4.1.57264.2' }),
      400,
      timestampReply,
      /^unaccepted policy: requested TSA policy is not supported by the TSA\./,
    ],
    [
      'a policy that is no OID',
      () => postJson({ artifactHash: digest32, hashAlgorithm: 'sha256', tsaPolicyOID: 'one.two' }),
      400,
      timestampReply,
      /^OID should be comprised of at most 128 components\./,
    ],
    [
      'a nonce that is not a whole number',
      () => postJson({ artifactHash: digest32, hashAlgorithm: 'sha256', nonce: 1.5 }),
      400,
      timestampReply,
      /^Error generating timestamp response\. nonce must be a whole number, 0 or more\./,
    ],
    [
      'a negative nonce',
      () => postJson({ artifactHash: digest32, hashAlgorithm: 'sha256', nonce: -5 }),
      400,
      timestampReply,
      /^Error generating timestamp response\. nonce must be a whole number, 0 or more\./,
    ],
    [
      'a body that is not JSON',
      () => postJson('{"artifactHash":'),
      400,
      timestampReply,
      /^Error generating timestamp response\. The body is not JSON/,
    ],
    [
      'a JSON body over 1024 bytes',
      () => postJson({ artifactHash: digest32, hashAlgorithm: 'sha256', padding: 'x'.repeat(1024) }),
      400,
      timestampReply,
      /^timestamp request is too large\. A JSON time-stamp request is at most 1024 bytes\./,
    ],
    [
      'a DER body over 4096 bytes',
      () => post(new Uint8Array(5000), { 'content-type': 'application/timestamp-query' }),
      400,
      timestampReply,
      /^Error generating timestamp response\. A time-stamp request is at most 4096 bytes\./,
    ],
    [
      'a DER body that is not a TimeStampReq',
      () => post(Buffer.from('not DER'), { 'content-type': 'application/timestamp-query' }),
      400,
      timestampReply,
      /^Error generating timestamp response\. The request is not a DER TimeStampReq/,
    ],
    [
      'another content type',
      () => post('{}', { 'content-type': 'text/plain' }),
      415,
      json,
      /^unsupported media type "text\/plain", only \[application\/timestamp-query application\/json\] are allowed$/,
    ],
    [
      'an Accept it cannot meet',
      () =>
        post(JSON.stringify({ artifactHash: digest32, hashAlgorithm: 'sha256' }), {
          'content-type': json,
          accept: json,
        }),
      406,
      json,
      /^unsupported media type requested, only \[application\/timestamp-reply\] are available$/,
    ],
    ['no body', () => post('', { 'content-type': json }), 422, json, /^request in body is required$/],
  ])('%s, as the reference answers', async (_name, send, status, type, message) => {
    const { res, body } = await send();
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toBe(type);
    const error = JSON.parse(body.toString('utf8'));
    expect(Object.keys(error).sort()).toEqual(['code', 'message']);
    expect(error.code).toBe(status);
    expect(error.message).toMatch(message);
  });

  test('SHA-1 over DER: 400 with the weak-hash sentence, like the JSON request', async () => {
    openssl(['ts', '-query', '-data', 'doc.txt', '-sha1', '-out', 'sha1.tsq']);
    const { res, body } = await post(fs.readFileSync(path.join(dir, 'sha1.tsq')), {
      'content-type': 'application/timestamp-query',
    });
    expect(res.status).toBe(400);
    expect(JSON.parse(body.toString()).message).toMatch(/^Weak hash algorithm in timestamp request\. .*SHA-1/);
  });

  test('GET /api/v1/timestamp/certchain: the PEM chain, leaf first, cached for a day', async () => {
    const res = await fetch(`${server!.url}/api/v1/timestamp/certchain`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pem-certificate-chain');
    expect(res.headers.get('cache-control')).toBe('max-age=86400, immutable');
    expect(await res.text()).toBe(fs.readFileSync(path.join(dir, 'keys/timeseal-tsa.pem'), 'utf8'));
  });

  test("after the day's build each token's imprint is a leaf of the day's ledger at its genTime", async () => {
    expect(stored).toHaveLength(3);
    await stop();
    const built = run(dir, ['ledger', 'build'], { env: { ...env, TIMESEAL_NOW: '2025-11-03T00:01:00.000Z' } });
    expect(built.code, built.stderr).toBe(0);
    const ledger = JSON.parse(fs.readFileSync(path.join(dir, 'ledgers', `${DAY}.json`), 'utf8')) as {
      entries: Array<[string, string]>;
    };
    const entries = new Map(ledger.entries.map((e) => [e[0], e[1]]));
    expect(entries.size).toBe(3);
    for (const { hash, genTime } of stored) expect(Date.parse(entries.get(hash)!), hash).toBe(genTime.getTime());
    // The JSON request's token (with its certificates: `timeseal receipt check` wants them in the token, which
    // sigstore-js's requests do not ask for) judged by Timeseal's own receipt checker: its promise is kept.
    const kept = run(dir, ['receipt', 'check', 'json.tsr', '--digest', stored[1]!.hash], {
      env: { ...env, TIMESEAL_NOW: '2025-11-03T00:02:00.000Z' },
    });
    expect(kept.code, kept.stdout + kept.stderr).toBe(0);
    expect(kept.stdout).toMatch(
      /^KEPT: the signed ledger of 2025-11-02 holds it at leaf \d+ \(recorded 2025-11-02T12:00:00\.000Z\); its inclusion proof/m,
    );
  });

  test('a server whose clock is on a published day: 503 with Retry-After in the reference error model, nothing stored', async () => {
    await stop();
    server = await startServer(dir, { ...env, TIMESEAL_NOW: NOW });
    const { res, body } = await postJson({
      artifactHash: sha256(Buffer.from('late')).toString('base64'),
      hashAlgorithm: 'sha256',
    });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('60');
    const error = JSON.parse(body.toString());
    expect(error.code).toBe(503);
    expect(error.message).toMatch(/^Error generating timestamp response\. The server's clock .*Nothing was stored\.$/);
    await stop();
  }, 60_000);
});
