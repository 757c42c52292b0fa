import { parseTopicArn, ProviderRuntimeConfig, SnsHeaders, SnsMessageType, snsOriginOf } from '../../../../lib/contract';
import { ConfigurationError } from '../../runtime/errors';
import { Headers } from '../../runtime/http';
import { parseSnsMessage, SnsMessage, snsSignatureMatches, snsTimestampSeconds } from './signature';
import { acceptFresh, Rejection } from '../../signatures/signing-key';
import { Admission, buildAdapter, eventIdFrom, ProviderAdapter } from '../adapter';
import type { AdapterContext } from '../provider-module';

/** What SNS tells about a request beside its body: none of it signed. */
const KEPT_HEADERS = [SnsHeaders.MESSAGE_TYPE, SnsHeaders.TOPIC_ARN, SnsHeaders.SUBSCRIPTION_ARN];

/**
 * Amazon SNS HTTP/S subscriptions: the JSON message is signed (SignatureVersion 1: SHA1withRSA,
 * 2: SHA256withRSA) with the key of the certificate at its `SigningCertURL`, which must be a
 * certificate as SNS names them on SNS's host of the topic's region and partition. A signature proves that SNS sent the message,
 * not whose topic it is: only the configured topics are served. A notification is stored under
 * its `MessageId`; a subscription confirmation is confirmed at its `SubscribeURL` (on the same
 * host) and never stored; an unsubscribe confirmation is stored like a notification, for the app
 * to see, and acted on by no one.
 */
export function snsAdapter(config: ProviderRuntimeConfig, context: AdapterContext = {}): ProviderAdapter {
  const topics = new Map((config.topicArns ?? []).map((arn) => [arn, parseTopicArn(arn)]));
  if (topics.size === 0 || [...topics.values()].some((topic) => topic === undefined)) {
    throw new ConfigurationError(`provider ${config.name}: topicArns must list SNS topic ARNs`);
  }
  // The SDK's own override of SNS's endpoint (the local twin's stand-in) replaces every topic's origin.
  const endpointOrigin = context.snsEndpoint ? new URL(context.snsEndpoint).origin : undefined;
  const originOf = (topicArn: string) => endpointOrigin ?? snsOriginOf(topics.get(topicArn)!);
  // The certificate's URL, the signature and the admission each read the request's body: it is parsed once.
  const parsed = new WeakMap<Buffer, ReturnType<typeof parseSnsMessage>>();
  const parse = (body: Buffer) => {
    let message = parsed.get(body);
    if (!message) parsed.set(body, (message = parseSnsMessage(body)));
    return message;
  };
  const served = (body: Buffer): SnsMessage | Rejection => {
    const message = parse(body);
    if ('problem' in message) return { ok: false, reason: 'malformed', detail: message.problem };
    if (!topics.has(message.TopicArn)) return { ok: false, reason: 'bad_signature', detail: 'TopicArn is not a topic this provider serves' };
    return message;
  };
  return {
    ...buildAdapter(config, {
      decodeKey: () => {
        throw new ConfigurationError(`provider ${config.name}: SNS signs with certificates, not a stored secret`);
      },
      verify: (_headers, body, keys, nowSeconds, tolerance) => {
        const message = served(body);
        if ('ok' in message) return message;
        const key = keys.find((candidate) => candidate.publicKey && snsSignatureMatches(message, candidate.publicKey));
        if (!key) return { ok: false, reason: 'bad_signature', detail: 'Signature does not verify with the signing certificate' };
        const timestamp = snsTimestampSeconds(message.Timestamp);
        if (timestamp === undefined) return { ok: false, reason: 'malformed', detail: 'Timestamp is not an ISO 8601 UTC time' };
        return acceptFresh(key, timestamp, nowSeconds, tolerance, 'Timestamp');
      },
      admit: (_headers, body) => admitMessage(parse(body) as SnsMessage, originOf),
      keptHeaders: KEPT_HEADERS,
    }),
    signingCertificateUrl: (headers: Headers, body: Buffer) => {
      if (headers[SnsHeaders.RAW_DELIVERY] === 'true') {
        return { ok: false, reason: 'malformed', detail: 'raw message delivery is unsigned: turn RawMessageDelivery off for this subscription' };
      }
      const message = served(body);
      if ('ok' in message) return message;
      return isCertificateUrl(message.SigningCertURL, originOf(message.TopicArn))
        ? { url: message.SigningCertURL }
        : { ok: false, reason: 'bad_signature', detail: 'SigningCertURL is not a certificate on the SNS host of the topic' };
    },
  };
}

/** What a verified message is: a notification or an unsubscription, stored; a subscription to confirm. */
function admitMessage(message: SnsMessage, originOf: (topicArn: string) => string): Admission {
  if (message.Type !== SnsMessageType.SUBSCRIPTION_CONFIRMATION) return eventIdFrom(message.MessageId, 'MessageId');
  const confirmUrl = message.SubscribeURL!;
  if (snsUrlProblem(confirmUrl, originOf(message.TopicArn), (url) => url.searchParams.get('Action') === 'ConfirmSubscription')) {
    return { kind: 'malformed', detail: 'SubscribeURL is not a ConfirmSubscription request to the SNS host of the topic' };
  }
  return { kind: 'handshake', answer: { status: 200, contentType: 'application/json', body: '{"result":"confirmed"}' }, confirmUrl };
}

/** The path SNS names its signing certificates by: `/SimpleNotificationService-` and lower-case hex digits (32 today), `.pem`. */
const CERTIFICATE_PATH = /^\/SimpleNotificationService-[0-9a-f]{32,64}\.pem$/;

/**
 * Whether a `SigningCertURL` is a certificate as SNS names them, on `origin`, written as SNS writes
 * it: compared as text, so no query, fragment, credentials, port or escape can make it another
 * request. The verifier fetches what this lets through on behalf of an unauthenticated sender.
 */
function isCertificateUrl(text: string, origin: string): boolean {
  return text.startsWith(`${origin}/`) && CERTIFICATE_PATH.test(text.slice(origin.length));
}

/** Whether a URL a message carries is not an https request to `origin` (no credentials, no other port) of the expected form. */
function snsUrlProblem(text: string, origin: string, hasForm: (url: URL) => boolean): boolean {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return true;
  }
  return url.protocol !== 'https:' || url.origin !== origin || url.username !== '' || url.password !== '' || !hasForm(url);
}
