// A real RFC 3161 time-stamp authority on loopback for the tests: Debian's `openssl ts -reply` behind a small
// HTTP wrapper (POST application/timestamp-query → application/timestamp-reply), with a root CA and a TSA
// certificate (critical extendedKeyUsage timeStamping) made by `openssl` in a temporary folder. Modes make the
// answers that must be refused: a reply for another digest, one without the nonce, one signed with an expired
// certificate, a refusal (PKIStatus rejection), garbage, an HTTP error, no answer at all.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import * as pkijs from 'pkijs';

export type TsaMode =
  | 'ok'
  | 'other-digest'
  | 'no-nonce'
  | 'other-nonce'
  | 'not-signed-data'
  | 'expired'
  | 'refuse'
  | 'garbage'
  | 'http-error'
  | 'timeout';

export interface LoopbackTsa {
  url: string;
  /** The root CA certificate (PEM file), for `openssl ts -verify -CAfile` and keys/tsa-ca.pem. */
  caFile: string;
  mode: TsaMode;
  requests: number;
  stop(): Promise<void>;
}

const openssl = (args: string[], cwd: string): Buffer =>
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });

/** Makes the CA, the TSA certificate and an expired one, and the `openssl ts` configuration, in `dir`. */
function makeAuthority(dir: string, name: string, rsa: boolean): void {
  const ec = rsa
    ? ['-newkey', 'rsa:2048', '-nodes']
    : ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  openssl(
    [
      'req',
      '-x509',
      ...ec,
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-days',
      '3650',
      '-subj',
      `/O=Timeseal tests/CN=${name} Root CA`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    dir,
  );
  fs.writeFileSync(
    path.join(dir, 'tsa.ext'),
    'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=critical,timeStamping\n',
  );
  openssl(['req', ...ec, '-keyout', 'tsa.key', '-out', 'tsa.csr', '-subj', `/O=Timeseal tests/CN=${name}`], dir);
  openssl(
    [
      'x509',
      '-req',
      '-in',
      'tsa.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-set_serial',
      '2',
      '-out',
      'tsa.pem',
      '-days',
      '3650',
      '-extfile',
      'tsa.ext',
    ],
    dir,
  );
  // An expired TSA certificate: `openssl ca` is the tool that sets dates in the past.
  fs.mkdirSync(path.join(dir, 'newcerts'));
  fs.writeFileSync(path.join(dir, 'index.txt'), '');
  fs.writeFileSync(path.join(dir, 'serial'), '03\n');
  fs.writeFileSync(
    path.join(dir, 'ca.cnf'),
    `[ca]\ndefault_ca = d\n[d]\ndir = ${dir}\ndatabase = $dir/index.txt\nnew_certs_dir = $dir/newcerts\nserial = $dir/serial\ndefault_md = sha256\npolicy = p\n[p]\ncommonName = supplied\norganizationName = optional\n`,
  );
  openssl(
    [
      'ca',
      '-batch',
      '-config',
      'ca.cnf',
      '-cert',
      'ca.pem',
      '-keyfile',
      'ca.key',
      '-in',
      'tsa.csr',
      '-out',
      'expired.pem',
      '-startdate',
      '20200101000000Z',
      '-enddate',
      '20200102000000Z',
      '-extfile',
      'tsa.ext',
      '-notext',
    ],
    dir,
  );
  const section = (label: string, cert: string) =>
    `[${label}]\ndir = ${dir}\nserial = $dir/tsaserial\ncrypto_device = builtin\nsigner_cert = $dir/${cert}\ncerts = $dir/ca.pem\nsigner_key = $dir/tsa.key\nsigner_digest = sha256\ndefault_policy = 1.3.6.1.4.1.99999.1\ndigests = sha256\naccuracy = secs:1\nordering = no\ntsa_name = yes\ness_cert_id_chain = no\ness_cert_id_alg = sha256\n`;
  fs.writeFileSync(
    path.join(dir, 'tsa.cnf'),
    `[tsa]\ndefault_tsa = good\n${section('good', 'tsa.pem')}${section('expired', 'expired.pem')}`,
  );
  fs.writeFileSync(path.join(dir, 'tsaserial'), '01\n');
}

/** A TSA on loopback; `rsa`: its CA and TSA keys are RSA 2048 (as most public TSAs'), else ECDSA P-256. */
export async function startTsa(
  name = 'Timeseal Test TSA',
  { rsa = false }: { rsa?: boolean } = {},
): Promise<LoopbackTsa> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-tsa-'));
  makeAuthority(dir, name, rsa);
  const held: http.ServerResponse[] = [];
  const tsa = { caFile: path.join(dir, 'ca.pem'), mode: 'ok' as TsaMode, requests: 0 } as LoopbackTsa;

  /** `openssl ts -reply` to `query` (DER) with the given configuration section. */
  const reply = (query: Buffer, section: string): Buffer => {
    const q = path.join(dir, `q${tsa.requests}.tsq`);
    fs.writeFileSync(q, query);
    return openssl(['ts', '-reply', '-config', 'tsa.cnf', '-section', section, '-queryfile', q], dir);
  };
  /** A query for `digest` made by `openssl ts -query` (for the answers to another question). */
  const query = (digestHex: string, nonce: boolean): Buffer =>
    openssl(['ts', '-query', '-digest', digestHex, '-sha256', '-cert', ...(nonce ? [] : ['-no_nonce'])], dir);

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      tsa.requests++;
      const body = Buffer.concat(chunks);
      const send = (status: number, bytes: Buffer | string, type = 'application/timestamp-reply') => {
        res.writeHead(status, { 'content-type': type });
        res.end(bytes);
      };
      if (req.method !== 'POST' || req.headers['content-type'] !== 'application/timestamp-query')
        return send(400, 'expected POST application/timestamp-query', 'text/plain');
      const asked = pkijs.TimeStampReq.fromBER(
        body.buffer.slice(body.byteOffset, body.byteOffset + body.length) as ArrayBuffer,
      );
      const digest = Buffer.from(asked.messageImprint.hashedMessage.valueBlock.valueHexView).toString('hex');
      switch (tsa.mode) {
        case 'ok':
          return send(200, reply(body, 'good'));
        case 'expired':
          return send(200, reply(body, 'expired'));
        case 'other-digest':
          return send(200, reply(query('ab'.repeat(32), true), 'good'));
        case 'no-nonce':
          return send(200, reply(query(digest, false), 'good'));
        case 'other-nonce':
          // The same digest, but the nonce of another request (openssl ts -query makes a random one).
          return send(200, reply(query(digest, true), 'good'));
        case 'not-signed-data':
          // Status granted, and a "token" that is a ContentInfo naming signedData around an empty SEQUENCE.
          return send(200, Buffer.from('3014300302010030' + '0d06092a864886f70d010702a000', 'hex'));
        case 'refuse':
          // TimeStampResp { status PKIStatusInfo { status rejection(2) } }
          return send(200, Buffer.from('30053003020102', 'hex'));
        case 'garbage':
          return send(200, 'this is not a time-stamp');
        case 'http-error':
          return send(503, 'busy', 'text/plain');
        case 'timeout':
          held.push(res);
          return undefined;
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  tsa.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/tsa`;
  tsa.stop = () =>
    new Promise((resolve) => {
      for (const r of held) r.destroy();
      server.closeAllConnections();
      server.close(() => {
        fs.rmSync(dir, { recursive: true, force: true });
        resolve();
      });
    });
  return tsa;
}
