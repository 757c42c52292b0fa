/**
 * Amazon SNS HTTPS subscriptions, against the local SNS stand-in (its own CA, signing certificate
 * and HTTPS host) and the emulators. The rules, as SNS documents them: the string to sign is the
 * message's documented fields, name and value each followed by a newline; SignatureVersion 1 signs
 * it SHA1withRSA, 2 SHA256withRSA, with the key of the certificate at SigningCertURL, which must be
 * an https URL on SNS's host of the topic's region; a notification is keyed by its MessageId; a
 * subscription confirmation is confirmed by requesting its SubscribeURL; only the configured
 * topics are served. `sns-validator` (AWS's own validator) judges the same messages.
 */
import { globalAgent } from 'node:https';
import MessageValidator = require('sns-validator');
import {
  AdapterKind,
  DeliveryStatus,
  MetricName,
  ProviderRuntimeConfig,
  providerRuntimeConfig,
  SNS_PAST_TOLERANCE_SECONDS,
  snsOriginOf,
} from '../../../../../lib/contract';
import { adaptersFor } from '../../../../../lambda/shared/providers/registry';
import { HttpsSnsClient } from '../../../../../lambda/shared/providers/sns/sns-client';
import {
  createLocalSnsAuthority,
  LocalSnsAuthority,
  LocalSnsHost,
  SIGNING_CERTIFICATE_PATH,
  signSnsFields,
  snsHeaders,
  snsMessage,
  SnsMessageFields,
  startLocalSnsHost,
} from '#twin/testing';
import { answerOf, apiGatewayEvent, InboxHarness, SecretsFixture } from '../../../../support/inbox-fixture';

const TOPIC = 'arn:aws:sns:us-east-1:123456789012:order-events';
const OTHER_TOPIC = 'arn:aws:sns:us-east-1:210987654321:someone-elses-topic';
const PATH = '/hooks/sns';

const secrets = new SecretsFixture();
let authority: LocalSnsAuthority;
let host: LocalSnsHost;
let h: InboxHarness;
let config: ProviderRuntimeConfig;

beforeAll(async () => {
  await secrets.start();
  authority = await createLocalSnsAuthority();
  host = await startLocalSnsHost(authority);
});
afterAll(async () => {
  await host.close();
  await secrets.stop();
});
beforeEach(async () => {
  h = await InboxHarness.create(secrets, 'sns');
  config = providerRuntimeConfig({ name: 'sns', adapter: AdapterKind.SNS, topicArns: [TOPIC], tolerancePastSeconds: SNS_PAST_TOLERANCE_SECONDS });
});
afterEach(() => h.destroy());

/** The verifier as its composition root builds it, but with the stand-in's host as SNS's and its CA trusted. */
function verifier(overrides: { origin?: string; client?: HttpsSnsClient } = {}) {
  const client = overrides.client ?? new HttpsSnsClient({ trustedAuthorities: [authority.caPem] });
  return h.verifier({
    providers: [config],
    adapters: adaptersFor([config], { snsEndpoint: overrides.origin ?? host.origin }),
    certificates: client,
    confirmations: client,
  });
}

const message = (options: Partial<Parameters<typeof snsMessage>[1]> = {}) => snsMessage(authority, { topicArn: TOPIC, origin: host.origin, ...options });
const post = (fields: SnsMessageFields | string, headers: Record<string, string> = {}) => {
  const body = typeof fields === 'string' ? fields : JSON.stringify(fields);
  const parsed = typeof fields === 'string' ? (JSON.parse(fields) as SnsMessageFields) : fields;
  return apiGatewayEvent(body, { ...snsHeaders(parsed), ...headers }, { path: PATH });
};

describe('a notification', () => {
  test.each(['1', '2'] as const)('signed with SignatureVersion %s is stored under its MessageId; its retry is a duplicate', async (version) => {
    const verify = verifier();
    const fields = message({ signatureVersion: version, message: JSON.stringify({ order: 'A-17', note: 'Grüße 👋' }) });
    expect(answerOf(await verify(post(fields)))).toEqual({ statusCode: 202, result: 'accepted' });
    expect(answerOf(await verify(post(fields)))).toMatchObject({ statusCode: 200, result: 'duplicate' });
    const [row] = await h.deliveryRows();
    expect(row).toMatchObject({ pk: `sns#${fields.MessageId}`, status: DeliveryStatus.RECEIVED });
    expect(JSON.stringify(row.meta)).not.toContain(fields.Signature);
  });

  test('with a Subject signs it too: a changed subject, message or id is refused and nothing is stored', async () => {
    const verify = verifier();
    const fields = message({ subject: 'Order shipped' });
    for (const altered of [
      { ...fields, Subject: 'Order cancelled' },
      { ...fields, Message: fields.Message.replace('world', 'World') },
      // Another last character: the id is random, and may end in any one of them.
      { ...fields, MessageId: `${fields.MessageId.slice(0, -1)}${fields.MessageId.endsWith('0') ? '1' : '0'}` },
      { ...fields, Signature: message({ subject: 'Order shipped' }).Signature },
    ]) {
      expect(answerOf(await verify(post(altered)))).toMatchObject({ statusCode: 400, result: 'bad_signature', detail: expect.stringContaining('Signature') });
    }
    expect(h.capture.metric(MetricName.AUTHENTICATION_FAILED, 'sns')).toBe(4);
    expect(await h.inboxItems()).toEqual([]);
  });

  test("is fresh for SNS's whole retry window, and refused as stale after it", async () => {
    const verify = verifier();
    const retried = message({ publishedAt: h.clock.now() - 3_600_000 });
    expect(answerOf(await verify(post(retried)))).toMatchObject({ statusCode: 202 });
    const stale = message({ publishedAt: h.clock.now() - (SNS_PAST_TOLERANCE_SECONDS + 1) * 1000 });
    expect(answerOf(await verify(post(stale)))).toMatchObject({ statusCode: 400, result: 'stale_timestamp', detail: expect.stringContaining('Timestamp') });
  });

  test('of a topic not configured is refused before its certificate is fetched, though SNS signed it', async () => {
    const verify = verifier();
    const before = host.certificateFetches();
    expect(answerOf(await verify(post(message({ topicArn: OTHER_TOPIC }))))).toMatchObject({
      statusCode: 400,
      result: 'bad_signature',
      detail: expect.stringContaining('TopicArn'),
    });
    expect(host.certificateFetches()).toBe(before);
    expect(await h.inboxItems()).toEqual([]);
  });

  test('with a certificate elsewhere than the SNS host is refused, and that URL is never requested', async () => {
    const verify = verifier();
    const elsewhere = [
      host.origin.replace('https:', 'http:') + SIGNING_CERTIFICATE_PATH,
      `https://localhost:${new URL(host.origin).port}${SIGNING_CERTIFICATE_PATH}`,
      `${host.origin.replace('https://', 'https://user:pass@')}${SIGNING_CERTIFICATE_PATH}`,
      `${host.origin}/SimpleNotificationService-local-twin.txt`,
    ];
    const before = host.certificateFetches();
    for (const url of elsewhere) {
      const fields = { ...message(), SigningCertURL: url };
      expect(answerOf(await verify(post(fields)))).toMatchObject({ statusCode: 400, detail: expect.stringContaining('SigningCertURL') });
    }
    expect(host.certificateFetches()).toBe(before);
  });

  test('naming a certificate URL of any shape but the one SNS names its certificates by is refused without a single request to the SNS host', async () => {
    // SNS's shape, stated here: https://<SNS host>/SimpleNotificationService-<lower-case hex>.pem, nothing before or after.
    const verify = verifier();
    const offShape = [
      `${host.origin}${SIGNING_CERTIFICATE_PATH}?x=1`,
      `${host.origin}/x.pem?x=1`,
      `${host.origin}${SIGNING_CERTIFICATE_PATH}?`,
      `${host.origin}${SIGNING_CERTIFICATE_PATH}#fragment`,
      `${host.origin}${SIGNING_CERTIFICATE_PATH}/`,
      `${host.origin}/${SIGNING_CERTIFICATE_PATH}`,
      `${host.origin}/certificates${SIGNING_CERTIFICATE_PATH}`,
      `${host.origin}/SimpleNotificationService-local-twin.pem`,
      `${host.origin}/SimpleNotificationService-${'a'.repeat(31)}.pem`,
      `${host.origin}${SIGNING_CERTIFICATE_PATH.replace('.pem', '.PEM')}`,
      `${host.origin}${SIGNING_CERTIFICATE_PATH.replace('Service-', 'Service-%30')}`,
      `${host.origin}/simplenotificationservice-${'a'.repeat(32)}.pem`,
    ];
    const before = host.requests();
    for (const url of offShape) {
      const fields = { ...message(), SigningCertURL: url };
      expect({ url, answer: answerOf(await verify(post(fields))) }).toMatchObject({
        url,
        answer: { statusCode: 400, result: 'bad_signature', detail: expect.stringContaining('SigningCertURL') },
      });
    }
    expect(host.requests()).toBe(before);
    expect(await h.inboxItems()).toEqual([]);
  });

  test('a certificate URL that cannot be fetched is fetched again only after a pause, and at most 20 fetches start in a minute', async () => {
    // The rule, stated here: a failed URL is answered 503 from memory for 10 s; at most 20 fetches start per minute.
    const verify = verifier();
    h.clock.set(Math.ceil(h.clock.now() / 60_000) * 60_000);
    const missing = (digit: string) => `${host.origin}/SimpleNotificationService-${digit.repeat(32)}.pem`;
    const before = host.requests();
    for (let i = 0; i < 5; i++) {
      expect(answerOf(await verify(post({ ...message(), SigningCertURL: missing('0') })))).toMatchObject({
        statusCode: 503,
        result: 'certificate_unavailable',
      });
    }
    expect(host.requests()).toBe(before + 1);
    h.clock.advance(10_000);
    expect(answerOf(await verify(post({ ...message(), SigningCertURL: missing('0') })))).toMatchObject({ statusCode: 503 });
    expect(host.requests()).toBe(before + 2);

    // Many well-shaped URLs SNS does not serve, one after the other: 20 fetches this minute, not one more.
    const names = [...'123456789abcdef'].flatMap((first) => [...'0123456789'].map((second) => `${first}${second}`)).slice(0, 30);
    for (const name of names) {
      const url = `${host.origin}/SimpleNotificationService-${name.repeat(16)}.pem`;
      expect(answerOf(await verify(post({ ...message(), SigningCertURL: url })))).toMatchObject({ statusCode: 503 });
    }
    expect(host.requests()).toBe(before + 20);
    // The real certificate is not fetched either until the next minute; then it is, and the message accepted.
    const genuine = message();
    expect(answerOf(await verify(post(genuine)))).toMatchObject({ statusCode: 503, result: 'certificate_unavailable' });
    expect(host.requests()).toBe(before + 20);
    h.clock.advance(60_000);
    expect(answerOf(await verify(post(genuine)))).toEqual({ statusCode: 202, result: 'accepted' });
    expect(host.requests()).toBe(before + 21);
  });

  test('is fetched once per certificate URL, however many messages it signs', async () => {
    const verify = verifier();
    const before = host.certificateFetches();
    for (let i = 0; i < 5; i++) expect(answerOf(await verify(post(message())))).toMatchObject({ statusCode: 202 });
    expect(host.certificateFetches()).toBe(before + 1);
  });

  test('whose certificate cannot be fetched is answered 503, so that SNS retries, and counted', async () => {
    const verify = verifier({ client: new HttpsSnsClient() });
    expect(answerOf(await verify(post(message())))).toMatchObject({ statusCode: 503, result: 'certificate_unavailable' });
    expect(h.capture.metric(MetricName.CERTIFICATE_UNAVAILABLE, 'sns')).toBe(1);
    expect(await h.inboxItems()).toEqual([]);
  });

  test('sent with raw message delivery (unsigned) is refused, naming the setting', async () => {
    const fields = message();
    expect(answerOf(await verifier()(post(fields, { 'x-amz-sns-rawdelivery': 'true' })))).toMatchObject({
      statusCode: 400,
      detail: expect.stringContaining('RawMessageDelivery'),
    });
  });

  test.each([
    ['not JSON', 'Type=Notification'],
    ['without a MessageId', JSON.stringify({ Type: 'Notification', TopicArn: TOPIC })],
    ['of another type', JSON.stringify({ Type: 'Ping' })],
  ])('%s is answered 400 naming what is wrong', async (_label, body) => {
    expect(answerOf(await verifier()(apiGatewayEvent(body, {}, { path: PATH })))).toMatchObject({ statusCode: 400, result: 'malformed' });
  });
});

describe('a subscription confirmation', () => {
  test('of a configured topic is confirmed at its SubscribeURL, answered 200 and never stored', async () => {
    const fields = message({ type: 'SubscriptionConfirmation' });
    const response = await verifier()(post(fields));
    expect(response).toMatchObject({ statusCode: 200 });
    expect(host.confirmations).toContainEqual({ topicArn: TOPIC, token: fields.Token });
    expect(h.capture.metric(MetricName.HANDSHAKE, 'sns')).toBe(1);
    expect(await h.inboxItems()).toEqual([]);
  });

  test('of another topic is refused and not confirmed', async () => {
    const fields = message({ type: 'SubscriptionConfirmation', topicArn: OTHER_TOPIC });
    expect(answerOf(await verifier()(post(fields)))).toMatchObject({ statusCode: 400, detail: expect.stringContaining('TopicArn') });
    expect(host.confirmations.map((confirmation) => confirmation.token)).not.toContain(fields.Token);
  });

  test('whose SubscribeURL leads elsewhere is not requested; one SNS does not confirm is answered 502', async () => {
    const stray = message({ type: 'SubscriptionConfirmation' });
    // Re-signed by the stand-in with a SubscribeURL on another host: the signature holds, the URL does not.
    const resigned = snsMessageResigned({ ...stray, SubscribeURL: stray.SubscribeURL.replace('127.0.0.1', 'localhost') });
    expect(answerOf(await verifier()(post(resigned)))).toMatchObject({ statusCode: 400, detail: expect.stringContaining('SubscribeURL') });
    expect(host.confirmations.map((confirmation) => confirmation.token)).not.toContain(stray.Token);

    const refused = snsMessageResigned({
      ...message({ type: 'SubscriptionConfirmation' }),
      SubscribeURL: `${host.origin}/?Action=ConfirmSubscription&TopicArn=${TOPIC}`,
    });
    expect(answerOf(await verifier()(post(refused)))).toMatchObject({ statusCode: 502, result: 'confirmation_failed' });
    expect(h.capture.metric(MetricName.CONFIRMATION_FAILED, 'sns')).toBe(1);
  });
});

describe('an unsubscribe confirmation', () => {
  test('is stored under its MessageId for the app to see; nothing resubscribes', async () => {
    const fields = message({ type: 'UnsubscribeConfirmation' });
    const before = host.confirmations.length;
    expect(answerOf(await verifier()(post(fields)))).toEqual({ statusCode: 202, result: 'accepted' });
    expect(await h.deliveryRows()).toMatchObject([{ pk: `sns#${fields.MessageId}` }]);
    expect(host.confirmations.length).toBe(before);
  });
});

describe("the SNS host of a topic's partition", () => {
  test.each([
    ['arn:aws:sns:eu-west-1:123456789012:t', 'https://sns.eu-west-1.amazonaws.com'],
    ['arn:aws-cn:sns:cn-north-1:123456789012:t', 'https://sns.cn-north-1.amazonaws.com.cn'],
    ['arn:aws-us-gov:sns:us-gov-west-1:123456789012:t.fifo', 'https://sns.us-gov-west-1.amazonaws.com'],
  ])('%s is %s: the only host its certificate and confirmation may come from', (arn, origin) => {
    const [adapter] = adaptersFor([{ ...config, topicArns: [arn] }]).values();
    const fields = snsMessage(authority, { topicArn: arn, origin });
    expect(snsOriginOf({ partition: arn.split(':')[1], region: arn.split(':')[3] })).toBe(origin);
    expect(adapter.signingCertificateUrl!({}, Buffer.from(JSON.stringify(fields)))).toEqual({ url: `${origin}${SIGNING_CERTIFICATE_PATH}` });
    for (const lookalike of [origin.replace('sns.', 'sns-'), `${origin}.example.com`, origin.replace(/sns\.[^.]+/, 'sns.us-west-2'), `${origin}:8443`]) {
      expect(
        adapter.signingCertificateUrl!({}, Buffer.from(JSON.stringify({ ...fields, SigningCertURL: `${lookalike}${SIGNING_CERTIFICATE_PATH}` }))),
      ).toMatchObject({
        ok: false,
      });
    }
  });
});

describe('sns-validator, AWS’s own validator, judges the same messages alike', () => {
  const validate = (fields: SnsMessageFields) =>
    new Promise<boolean>((resolve) => new MessageValidator(/^127\.0\.0\.1:\d+$/).validate(JSON.stringify(fields), (error) => resolve(!error)));
  beforeAll(() => {
    globalAgent.options.ca = [authority.caPem];
  });
  afterAll(() => {
    delete globalAgent.options.ca;
  });

  test.each([
    ['a notification, version 1', { signatureVersion: '1' as const }],
    ['a notification, version 2, with a subject', { subject: 'Ünïcode ✓' }],
    ['a subscription confirmation', { type: 'SubscriptionConfirmation' as const }],
  ])('%s: both accept it, and both refuse it with one byte changed', async (_label, options) => {
    const fields = message(options);
    const altered = { ...fields, Message: `${fields.Message} ` };
    expect(await validate(fields)).toBe(true);
    expect(await validate(altered)).toBe(false);
    const verify = verifier();
    expect(answerOf(await verify(post(fields))).statusCode).toBeLessThan(300);
    expect(answerOf(await verify(post(altered)))).toMatchObject({ statusCode: 400 });
  });
});

/** The fields signed again by the stand-in, as SNS would have signed them. */
function snsMessageResigned(fields: SnsMessageFields): SnsMessageFields {
  const { Signature: _drop, ...rest } = fields;
  return { ...rest, Signature: signSnsFields(rest, authority.signingKey, rest.SignatureVersion as '1' | '2') };
}
