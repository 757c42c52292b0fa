/**
 * A local stand-in for Amazon SNS's side of an HTTPS subscription, clearly not SNS: a certificate
 * authority made on the spot ("webhook-inbox local SNS CA"), the signing certificate it issues,
 * the HTTPS server SNS's host is played by (its certificate issued by the same CA, for 127.0.0.1
 * and localhost), and messages signed as SNS documents them, with node:crypto and never with the
 * verifier's own code in lambda/shared.
 */
import { createServer, Server } from 'node:https';
import { AddressInfo } from 'node:net';
import { createHash, KeyObject, randomUUID, sign, webcrypto } from 'node:crypto';
// @peculiar/x509 resolves its parts through decorators' metadata: the polyfill comes first.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

/** The name every certificate of the stand-in is issued under: no one can mistake it for Amazon's. */
export const LOCAL_SNS_CA_NAME = 'CN=webhook-inbox local SNS CA (not Amazon), O=cdk-webhook-inbox local twin';

const RSA = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', publicExponent: new Uint8Array([1, 0, 1]), modulusLength: 2048 } as const;

/** The stand-in's certificates: the CA's, the signing one, and the HTTPS server's with its key. */
export interface LocalSnsAuthority {
  /** The CA certificate (PEM): a process trusts the stand-in's HTTPS host with it (`NODE_EXTRA_CA_CERTS`). */
  readonly caPem: string;
  /** The certificate SNS's `SigningCertURL` serves (PEM). */
  readonly signingCertificatePem: string;
  /** The signing certificate's private key, as SNS keeps its own. */
  readonly signingKey: KeyObject;
  readonly serverCertificatePem: string;
  readonly serverKeyPem: string;
}

/** Makes a CA and the two certificates it issues; valid for a day from an hour ago. */
export async function createLocalSnsAuthority(): Promise<LocalSnsAuthority> {
  const notBefore = new Date(Date.now() - 3_600_000);
  const notAfter = new Date(Date.now() + 86_400_000);
  // Key generation is the slow part (RSA): the three pairs are made at once.
  const [caKeys, signingKeys, serverKeys] = await Promise.all(
    Array.from({ length: 3 }, () => webcrypto.subtle.generateKey(RSA, true, ['sign', 'verify']) as Promise<webcrypto.CryptoKeyPair>),
  );
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: LOCAL_SNS_CA_NAME,
    notBefore,
    notAfter,
    keys: caKeys,
    signingAlgorithm: RSA,
    extensions: [new x509.BasicConstraintsExtension(true, 0, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true)],
  });
  const issue = async (serialNumber: string, subject: string, keys: webcrypto.CryptoKeyPair, extensions: x509.Extension[]) => {
    const certificate = await x509.X509CertificateGenerator.create({
      serialNumber,
      subject,
      issuer: ca.subject,
      notBefore,
      notAfter,
      publicKey: keys.publicKey,
      signingKey: caKeys.privateKey,
      signingAlgorithm: RSA,
      extensions,
    });
    return { pem: certificate.toString('pem'), key: KeyObject.from(keys.privateKey) };
  };
  const signing = await issue('02', 'CN=webhook-inbox local SNS signing certificate (not Amazon)', signingKeys, [
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
  ]);
  const server = await issue('03', 'CN=localhost', serverKeys, [
    new x509.SubjectAlternativeNameExtension([
      { type: 'dns', value: 'localhost' },
      { type: 'ip', value: '127.0.0.1' },
    ]),
    new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
  ]);
  return {
    caPem: ca.toString('pem'),
    signingCertificatePem: signing.pem,
    signingKey: signing.key,
    serverCertificatePem: server.pem,
    serverKeyPem: server.key.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

/** A message as SNS posts it: every field a string (a notification's `Subject` may be absent). */
export type SnsMessageFields = Record<string, string>;

/**
 * SNS's string to sign (its documentation, "Verifying the signatures of Amazon SNS messages"):
 * for a notification `Message`, `MessageId`, `Subject` when there is one, `Timestamp`,
 * `TopicArn`, `Type`; for a subscription or unsubscribe confirmation `Message`, `MessageId`,
 * `SubscribeURL`, `Timestamp`, `Token`, `TopicArn`, `Type`; each as name, newline, value, newline.
 */
export function snsStringToSign(fields: SnsMessageFields): string {
  const names =
    fields.Type === 'Notification'
      ? ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type']
      : ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];
  return names
    .filter((name) => fields[name] !== undefined)
    .map((name) => `${name}\n${fields[name]}\n`)
    .join('');
}

/** Signs the fields as SNS does: SignatureVersion 1 SHA1withRSA, 2 SHA256withRSA, base64. */
export function signSnsFields(fields: SnsMessageFields, key: KeyObject, version: '1' | '2'): string {
  return sign(version === '1' ? 'sha1' : 'sha256', Buffer.from(snsStringToSign(fields), 'utf8'), key).toString('base64');
}

export interface SnsMessageOptions {
  readonly type?: 'Notification' | 'SubscriptionConfirmation' | 'UnsubscribeConfirmation';
  readonly topicArn: string;
  /** The origin the stand-in serves (its certificate and its confirmations). */
  readonly origin: string;
  readonly message?: string;
  readonly subject?: string;
  readonly messageId?: string;
  /** When it was published, in milliseconds; default now. */
  readonly publishedAt?: number;
  readonly signatureVersion?: '1' | '2';
}

/**
 * The path the signing certificate is served under, shaped as SNS names its own
 * (`/SimpleNotificationService-<32 hex digits>.pem`, the only shape the verifier fetches); the
 * digits are a digest of the stand-in's name, not one of Amazon's.
 */
export const SIGNING_CERTIFICATE_PATH = `/SimpleNotificationService-${createHash('sha256').update('webhook-inbox local SNS stand-in').digest('hex').slice(0, 32)}.pem`;

/** A message of `type` as SNS would post it for the topic, signed by the stand-in's key (the authority's, or one read from the twin's ready line). */
export function snsMessage(authority: Pick<LocalSnsAuthority, 'signingKey'>, options: SnsMessageOptions): SnsMessageFields {
  const type = options.type ?? 'Notification';
  const messageId = options.messageId ?? randomUUID();
  const token = randomUUID().replace(/-/g, '').repeat(4);
  const fields: SnsMessageFields = {
    Type: type,
    MessageId: messageId,
    TopicArn: options.topicArn,
    ...(options.subject !== undefined ? { Subject: options.subject } : {}),
    Message:
      options.message ??
      (type === 'Notification'
        ? JSON.stringify({ hello: 'world' })
        : `You have chosen to ${type === 'SubscriptionConfirmation' ? 'subscribe to' : 'deactivate subscription of'} the topic ${options.topicArn}.`),
    Timestamp: new Date(options.publishedAt ?? Date.now()).toISOString(),
    ...(type === 'Notification'
      ? {}
      : { Token: token, SubscribeURL: `${options.origin}/?Action=ConfirmSubscription&TopicArn=${encodeURIComponent(options.topicArn)}&Token=${token}` }),
    SignatureVersion: options.signatureVersion ?? '2',
    SigningCertURL: `${options.origin}${SIGNING_CERTIFICATE_PATH}`,
  };
  return { ...fields, Signature: signSnsFields(fields, authority.signingKey, fields.SignatureVersion as '1' | '2') };
}

/** The headers SNS sets on the HTTPS POST of a message. */
export function snsHeaders(fields: SnsMessageFields, subscriptionArn = `${fields.TopicArn}:${randomUUID()}`): Record<string, string> {
  return {
    'content-type': 'text/plain; charset=UTF-8',
    'x-amz-sns-message-type': fields.Type,
    'x-amz-sns-message-id': fields.MessageId,
    'x-amz-sns-topic-arn': fields.TopicArn,
    ...(fields.Type === 'Notification' ? { 'x-amz-sns-subscription-arn': subscriptionArn } : {}),
    'user-agent': 'Amazon Simple Notification Service Agent',
  };
}

/** The stand-in's HTTPS host: it serves the signing certificate and records the confirmations it is asked for. */
export interface LocalSnsHost {
  readonly origin: string;
  /** The `Token` of each confirmation requested, in order. */
  readonly confirmations: readonly { readonly topicArn: string; readonly token: string }[];
  /** How many times the signing certificate was fetched. */
  certificateFetches(): number;
  /** How many requests of any kind, to any path, the host received. */
  requests(): number;
  close(): Promise<void>;
}

/** Starts the stand-in's HTTPS host on 127.0.0.1 (`port` 0: any free port). */
export async function startLocalSnsHost(authority: LocalSnsAuthority, port = 0): Promise<LocalSnsHost> {
  const confirmations: { topicArn: string; token: string }[] = [];
  let fetches = 0;
  let requests = 0;
  const server: Server = createServer({ cert: authority.serverCertificatePem, key: authority.serverKeyPem }, (request, response) => {
    requests += 1;
    const url = new URL(request.url ?? '/', 'https://127.0.0.1');
    if (request.method === 'GET' && url.pathname === SIGNING_CERTIFICATE_PATH) {
      fetches += 1;
      response.writeHead(200, { 'content-type': 'application/x-pem-file' }).end(authority.signingCertificatePem);
      return;
    }
    const topicArn = url.searchParams.get('TopicArn');
    const token = url.searchParams.get('Token');
    if (request.method === 'GET' && url.searchParams.get('Action') === 'ConfirmSubscription' && topicArn && token) {
      confirmations.push({ topicArn, token });
      response
        .writeHead(200, { 'content-type': 'text/xml' })
        .end(
          `<ConfirmSubscriptionResponse><ConfirmSubscriptionResult><SubscriptionArn>${topicArn}:${randomUUID()}</SubscriptionArn></ConfirmSubscriptionResult></ConfirmSubscriptionResponse>`,
        );
      return;
    }
    // Not SNS's API: a client pointed here by AWS_ENDPOINT_URL_SNS is told what the stand-in is.
    response
      .writeHead(404, { 'content-type': 'text/plain' })
      .end(`the local SNS stand-in serves only ${SIGNING_CERTIFICATE_PATH} and GET ?Action=ConfirmSubscription&TopicArn=...&Token=...\n`);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    origin: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    confirmations,
    certificateFetches: () => fetches,
    requests: () => requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
