/**
 * Property-based fuzzing of the verifier's Amazon SNS preset, run by `test/fuzz/sns.test.ts`: a
 * verifier serving one topic against the emulators, an S3 body store, and the local SNS stand-in
 * (its CA, its signing certificate and its HTTPS host) as SNS. Messages are signed by the stand-in
 * (packages/webhook-inbox-local/src/aws/sns/stand-in.ts, node:crypto, nothing of lambda/): SignatureVersion 1 and 2, the three
 * types, with and without a Subject, unicode and long messages (SNS's limit is 256 KiB; some go to
 * the body store). A plan then mutates one: a flipped byte in a signed field, two signed fields
 * swapped, another signature, another SignatureVersion, a field dropped, another topic (signed by
 * SNS all the same), a certificate URL elsewhere or of another shape, a SubscribeURL elsewhere (re-signed), raw message
 * delivery, or only a reformatting of the JSON (still authentic).
 *
 * The rules, as SNS documents them and stated here on their own:
 * - a message is authentic only with SNS's signature of its signed fields (a notification's
 *   `Message`, `MessageId`, `Subject` when present, `Timestamp`, `TopicArn`, `Type`; a
 *   confirmation's `Message`, `MessageId`, `SubscribeURL`, `Timestamp`, `Token`, `TopicArn`,
 *   `Type`), verified with the certificate at `SigningCertURL`, which must be on SNS's host and
 *   named as SNS names its certificates (`/SimpleNotificationService-<lower-case hex>.pem`, no
 *   query, no fragment), or it is never fetched; the other fields and the JSON's layout are not signed;
 * - SNS signs every topic's messages: one of a topic not served is refused;
 * - fresh for 3,900 s past (SNS retries for an hour) and 300 s ahead;
 * - a notification or unsubscribe confirmation is stored under its `MessageId`: the first is
 *   accepted (202), the same bytes again a duplicate (200), other authentic bytes under that id
 *   quarantined (200), never a second row;
 * - a subscription confirmation is confirmed by requesting its `SubscribeURL` (a
 *   `ConfirmSubscription` request on SNS's host) and answered 200, never stored; SNS refusing the
 *   confirmation is a 502, a certificate SNS's host does not serve a 503 (SNS retries both);
 * - anything else is a 400 naming a field, and nothing is stored, enqueued or confirmed;
 * - no log line carries a message, a signature, a token or a subscribe URL.
 * After a run, `audit()` checks the table, the queue and the stand-in's record of confirmations.
 */
import { createHash, randomUUID } from 'node:crypto';
import { S3Client } from '@aws-sdk/client-s3';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import * as fc from 'fast-check';
import { AdapterKind, Defaults, ProviderRuntimeConfig, providerRuntimeConfig, SNS_PAST_TOLERANCE_SECONDS } from '../../lib/contract';
import { adaptersFor } from '../../lambda/shared/providers/registry';
import { HttpsSnsClient } from '../../lambda/shared/providers/sns/sns-client';
import {
  createBodyBucket,
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
import { apiGatewayEvent, InboxHarness, SecretsFixture } from '../support/inbox-fixture';
import type { AuditReport } from './verifier-fuzz';

const TOPIC = 'arn:aws:sns:us-east-1:123456789012:order-events';
const FOREIGN_TOPIC = 'arn:aws:sns:us-east-1:210987654321:someone-elses-topic';
const PROVIDER = 'sns';
const PATH = `/hooks/${PROVIDER}`;
/** SNS's retry window (an hour) and five minutes of skew; five minutes ahead. */
const PAST_SECONDS = 3_900;
const FUTURE_SECONDS = 300;
/** The fields SNS signs, by type, as its documentation lists them. */
const SIGNED_NOTIFICATION = ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'] as const;
const SIGNED_CONFIRMATION = ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'] as const;
const SIGNED_FIELDS = [...new Set([...SIGNED_NOTIFICATION, ...SIGNED_CONFIRMATION])];
const EVERY_FIELD = [...SIGNED_FIELDS, 'SignatureVersion', 'Signature', 'SigningCertURL'];

type MessageType = 'Notification' | 'SubscriptionConfirmation' | 'UnsubscribeConfirmation';

/** What is done to the signed message before it is posted (plain data, so fast-check prints and shrinks it). */
export type SnsMutation =
  | { readonly kind: 'none' }
  /** Still SNS's message: keys reordered, indented, with the unsigned `UnsubscribeURL` real notifications carry. */
  | { readonly kind: 'reformat'; readonly variant: number }
  | { readonly kind: 'flip'; readonly field: number; readonly index: number; readonly bit: number }
  | { readonly kind: 'swap'; readonly a: number; readonly b: number }
  | { readonly kind: 'signature'; readonly variant: number }
  | { readonly kind: 'version'; readonly to: string }
  | { readonly kind: 'drop'; readonly field: number }
  | { readonly kind: 'foreign-topic' }
  | { readonly kind: 'certificate-url'; readonly variant: number }
  | { readonly kind: 'subscribe-url'; readonly variant: number }
  | { readonly kind: 'raw-delivery' };

export interface SnsFuzzPlan {
  readonly type: MessageType;
  readonly version: '1' | '2';
  /** A notification's Subject; null: none. */
  readonly subject: string | null;
  readonly message: string;
  /** The message is `message` this many times (long messages). */
  readonly repeat: number;
  /** How long before the verifier's now it was published, seconds (negative: ahead). */
  readonly ageSeconds: number;
  /** Post the message as signed before the mutated one (an id already stored). */
  readonly intactFirst: boolean;
  /** How many times the (mutated) message is posted: SNS retries with the same bytes. */
  readonly copies: number;
  readonly mutation: SnsMutation;
}

/** Ages well clear of the boundaries (the verifier reads whole seconds), and some across them. */
const ageArb = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: -(FUTURE_SECONDS - 10), max: PAST_SECONDS - 10 }) },
  { weight: 1, arbitrary: fc.integer({ min: PAST_SECONDS + 10, max: 30 * 86_400 }) },
  { weight: 1, arbitrary: fc.integer({ min: -30 * 86_400, max: -(FUTURE_SECONDS + 10) }) },
);

const mutationArb: fc.Arbitrary<SnsMutation> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ kind: 'none' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reformat' as const), variant: fc.nat(2) }) },
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant('flip' as const), field: fc.nat(SIGNED_FIELDS.length - 1), index: fc.nat(), bit: fc.nat(6) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('swap' as const), a: fc.nat(SIGNED_FIELDS.length - 1), b: fc.nat(SIGNED_FIELDS.length - 1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('signature' as const), variant: fc.nat(4) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('version' as const), to: fc.constantFrom('1', '2', '3', '', 'v2', ' 2') }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('drop' as const), field: fc.nat(EVERY_FIELD.length - 1) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'foreign-topic' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('certificate-url' as const), variant: fc.nat(10) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('subscribe-url' as const), variant: fc.nat(4) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'raw-delivery' as const }) },
);

export const snsFuzzPlanArb: fc.Arbitrary<SnsFuzzPlan> = fc.record({
  type: fc.constantFrom<MessageType>('Notification', 'Notification', 'SubscriptionConfirmation', 'UnsubscribeConfirmation'),
  version: fc.constantFrom<'1' | '2'>('1', '2'),
  subject: fc.option(fc.string({ minLength: 1, maxLength: 100, unit: 'grapheme' }), { nil: null }),
  message: fc.oneof(fc.string({ minLength: 1, maxLength: 200 }), fc.string({ minLength: 1, maxLength: 200, unit: 'grapheme' }), fc.json()),
  repeat: fc.oneof({ weight: 9, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.integer({ min: 100, max: 1_200 }) }),
  ageSeconds: ageArb,
  intactFirst: fc.boolean(),
  copies: fc.integer({ min: 1, max: 3 }),
  mutation: mutationArb,
});

/** SNS's limit on a message: 256 KiB. */
const MAX_MESSAGE_BYTES = 256 * 1024;

/** What a post must be answered, by the rules above. */
type Expectation =
  | { readonly kind: 'event'; readonly messageId: string; readonly digest: string }
  | { readonly kind: 'confirm'; readonly token: string }
  | { readonly kind: 'status'; readonly status: 400 | 502 | 503; readonly detailNames?: string; readonly reason?: string };

/** A request to post and what it must be answered. */
interface Post {
  readonly body: string;
  readonly headers: Record<string, string>;
  readonly expect: Expectation;
  /** What no log line may carry. */
  readonly secrets: readonly string[];
}

export interface SnsFuzzStats {
  cases: number;
  posts: number;
  byOutcome: Record<string, number>;
  byMutation: Record<string, number>;
  violations: number;
}

/** The store's audit, as the every-preset fuzzer reports it, and the confirmations the stand-in was asked for. */
export interface SnsAudit extends AuditReport {
  readonly confirmations: number;
  readonly expectedConfirmations: number;
}

const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

export class SnsFuzzBench {
  readonly stats: SnsFuzzStats = { cases: 0, posts: 0, byOutcome: {}, byMutation: {}, violations: 0 };
  /** MessageId → digest of the body stored under it. */
  private readonly stored = new Map<string, string>();
  /** `MessageId|digest` of each authentic altered copy answered quarantined. */
  private readonly quarantined = new Set<string>();
  /** Tokens of the confirmations the host must have been asked for, with repeats. */
  private readonly confirmedTokens: string[] = [];
  private readonly confirmationsBefore: number;

  private constructor(
    readonly h: InboxHarness,
    private readonly authority: LocalSnsAuthority,
    private readonly host: LocalSnsHost,
    private readonly verifier: ReturnType<InboxHarness['verifier']>,
    private readonly s3: S3Client,
  ) {
    this.confirmationsBefore = host.confirmations.length;
  }

  static async create(secrets: SecretsFixture): Promise<SnsFuzzBench> {
    const h = await InboxHarness.create(secrets, 'sns-fuzz');
    const s3 = new S3Client({ forcePathStyle: true });
    await createBodyBucket(s3, h.names);
    const authority = await createLocalSnsAuthority();
    const host = await startLocalSnsHost(authority);
    const config: ProviderRuntimeConfig = providerRuntimeConfig({
      name: PROVIDER,
      adapter: AdapterKind.SNS,
      topicArns: [TOPIC],
      tolerancePastSeconds: SNS_PAST_TOLERANCE_SECONDS,
    });
    // The verifier as its composition root builds it, with the stand-in's host as SNS's and its CA trusted.
    const client = new HttpsSnsClient({ trustedAuthorities: [authority.caPem] });
    const verifier = h.verifier({
      providers: [config],
      adapters: adaptersFor([config], { snsEndpoint: host.origin }),
      certificates: client,
      confirmations: client,
      bodies: h.bodyStore('verifier', { providers: [config] }),
      inlineBodyBytes: Defaults.INLINE_BODY_BYTES,
      maxBodyBytes: Defaults.MAX_BODY_BYTES,
    });
    return new SnsFuzzBench(h, authority, host, verifier, s3);
  }

  async destroy(): Promise<void> {
    await this.host.close();
    this.s3.destroy();
    this.h.destroy();
  }

  property(): fc.IAsyncProperty<[SnsFuzzPlan]> {
    return fc.asyncProperty(snsFuzzPlanArb, (plan) => this.run(plan));
  }

  /** The cases every run starts with: each type and version intact, and each kind of mutation once. */
  static examples(): [SnsFuzzPlan][] {
    const base: SnsFuzzPlan = {
      type: 'Notification',
      version: '2',
      subject: null,
      message: '{"hello":"world"}',
      repeat: 1,
      ageSeconds: 0,
      intactFirst: false,
      copies: 2,
      mutation: { kind: 'none' },
    };
    const plans: SnsFuzzPlan[] = [
      base,
      { ...base, version: '1', subject: 'Ünïcode ✓ subject' },
      { ...base, type: 'SubscriptionConfirmation' },
      { ...base, type: 'UnsubscribeConfirmation', version: '1' },
      // The longest message SNS sends, in multi-byte characters: stored in the body store.
      { ...base, message: 'é', repeat: MAX_MESSAGE_BYTES / 2 },
      { ...base, ageSeconds: PAST_SECONDS - 10 },
      { ...base, ageSeconds: PAST_SECONDS + 10 },
      { ...base, ageSeconds: -(FUTURE_SECONDS + 10) },
      { ...base, intactFirst: true, mutation: { kind: 'reformat', variant: 0 } },
      { ...base, mutation: { kind: 'flip', field: 0, index: 3, bit: 0 } },
      { ...base, mutation: { kind: 'swap', a: SIGNED_FIELDS.indexOf('Message'), b: SIGNED_FIELDS.indexOf('Subject') }, subject: 'swapped' },
      { ...base, mutation: { kind: 'signature', variant: 2 } },
      { ...base, mutation: { kind: 'version', to: '1' } },
      { ...base, mutation: { kind: 'drop', field: EVERY_FIELD.indexOf('Signature') } },
      { ...base, mutation: { kind: 'foreign-topic' } },
      ...Array.from({ length: 11 }, (_, variant): SnsFuzzPlan => ({ ...base, mutation: { kind: 'certificate-url', variant } })),
      ...Array.from({ length: 5 }, (_, variant): SnsFuzzPlan => ({ ...base, type: 'SubscriptionConfirmation', mutation: { kind: 'subscribe-url', variant } })),
      { ...base, type: 'UnsubscribeConfirmation', intactFirst: true, mutation: { kind: 'subscribe-url', variant: 0 } },
      { ...base, mutation: { kind: 'raw-delivery' } },
    ];
    return plans.map((plan) => [plan]);
  }

  /** One plan: its posts, each answer checked against the rules; false (with a log) on a violation. */
  async run(plan: SnsFuzzPlan): Promise<boolean> {
    this.stats.cases++;
    this.stats.byMutation[plan.mutation.kind] = (this.stats.byMutation[plan.mutation.kind] ?? 0) + 1;
    const now = this.h.clock.now();
    const fields = snsMessage(this.authority, {
      type: plan.type,
      topicArn: TOPIC,
      origin: this.host.origin,
      message: truncateToBytes(plan.message.repeat(plan.repeat), MAX_MESSAGE_BYTES),
      ...(plan.type === 'Notification' && plan.subject !== null ? { subject: plan.subject } : {}),
      messageId: randomUUID(),
      publishedAt: now - plan.ageSeconds * 1000,
      signatureVersion: plan.version,
    });
    const fresh = plan.ageSeconds <= PAST_SECONDS && plan.ageSeconds >= -FUTURE_SECONDS;
    const posts: Post[] = [];
    if (plan.intactFirst && plan.mutation.kind !== 'none') posts.push(this.authenticPost(fields, JSON.stringify(fields), fresh));
    const mutated = this.mutate(fields, plan.mutation, fresh);
    for (let copy = 0; copy < plan.copies; copy++) posts.push(mutated);
    const problems: string[] = [];
    for (const post of posts) {
      const logged = this.h.capture.lines.length;
      const answer = await this.verifier(apiGatewayEvent(post.body, post.headers, { path: PATH }));
      this.stats.posts++;
      problems.push(...this.check(post, answer));
      for (const line of this.h.capture.lines.slice(logged)) {
        for (const secret of post.secrets) if (line.includes(secret)) problems.push(`a log line carries ${secret.slice(0, 24)}…: ${line.slice(0, 200)}`);
      }
    }
    if (problems.length > 0) {
      this.stats.violations++;
      process.stderr.write(`SNS fuzz violation:\n  plan ${JSON.stringify(plan).slice(0, 600)}\n  ${problems.join('\n  ')}\n`);
      return false;
    }
    return true;
  }

  /** The answer checked against the expectation; the model updated with what was stored or confirmed. */
  private check(post: Post, answer: APIGatewayProxyStructuredResultV2): string[] {
    const status = answer.statusCode ?? 0;
    let parsed: { result?: string; detail?: string } = {};
    try {
      parsed = JSON.parse(String(answer.body)) as typeof parsed;
    } catch {
      return [`answer ${status} is not JSON: ${String(answer.body).slice(0, 100)}`];
    }
    const outcome = `${status} ${parsed.result ?? '?'}`;
    this.stats.byOutcome[outcome] = (this.stats.byOutcome[outcome] ?? 0) + 1;
    const expectation = post.expect;
    const problems: string[] = [];
    const want = (expected: string) => {
      if (outcome !== expected) problems.push(`answered ${outcome} (${parsed.detail ?? ''}), expected ${expected}`);
    };
    switch (expectation.kind) {
      case 'event': {
        const before = this.stored.get(expectation.messageId);
        if (before === undefined) {
          want('202 accepted');
          if (status === 202) this.stored.set(expectation.messageId, expectation.digest);
        } else if (before === expectation.digest) {
          want('200 duplicate');
        } else {
          want('200 quarantined');
          if (status === 200) this.quarantined.add(`${expectation.messageId}|${expectation.digest}`);
        }
        break;
      }
      case 'confirm':
        // SNS's own answer to its confirmation is any 2xx; the inbox answers 200.
        want('200 confirmed');
        if (status === 200) this.confirmedTokens.push(expectation.token);
        break;
      case 'status':
        if (status !== expectation.status) problems.push(`answered ${outcome} (${parsed.detail ?? ''}), expected ${expectation.status}`);
        if (expectation.reason && parsed.result !== expectation.reason) problems.push(`answered ${outcome}, expected the reason ${expectation.reason}`);
        if (expectation.status === 400) {
          const names = expectation.detailNames ? [expectation.detailNames] : [...EVERY_FIELD, 'RawMessageDelivery', 'body'];
          if (!names.some((name) => parsed.detail?.includes(name))) problems.push(`the 400's detail "${parsed.detail}" names none of ${names.join(', ')}`);
        }
        break;
    }
    return problems;
  }

  /** A post of fields SNS signed (`body` their JSON, however laid out): answered by type and age. */
  private authenticPost(fields: SnsMessageFields, body: string, fresh: boolean, headers = snsHeaders(fields)): Post {
    const secrets = [fields.Signature, fields.Message, fields.Token, fields.SubscribeURL].filter((value): value is string => (value?.length ?? 0) >= 16);
    if (!fresh) return { body, headers, secrets, expect: { kind: 'status', status: 400, reason: 'stale_timestamp', detailNames: 'Timestamp' } };
    if (fields.Type !== 'SubscriptionConfirmation')
      return { body, headers, secrets, expect: { kind: 'event', messageId: fields.MessageId, digest: sha256Hex(body) } };
    const url = parseUrl(fields.SubscribeURL);
    const onHost = url?.protocol === 'https:' && url.origin === this.host.origin && !url.username && !url.password;
    if (!onHost || url?.searchParams.get('Action') !== 'ConfirmSubscription') {
      return { body, headers, secrets, expect: { kind: 'status', status: 400, detailNames: 'SubscribeURL' } };
    }
    // The stand-in confirms a request that names the topic and a token, as SNS does; it refuses any other.
    const token = url.searchParams.get('Token');
    if (!url.searchParams.get('TopicArn') || !token) return { body, headers, secrets, expect: { kind: 'status', status: 502 } };
    return { body, headers, secrets, expect: { kind: 'confirm', token } };
  }

  /** The mutated post and what it must be answered. */
  private mutate(fields: SnsMessageFields, mutation: SnsMutation, fresh: boolean): Post {
    const secrets = [fields.Signature, fields.Message, fields.Token, fields.SubscribeURL].filter((value): value is string => (value?.length ?? 0) >= 16);
    const refused = (changed: SnsMessageFields, detailNames?: string, headers = snsHeaders(fields)): Post => ({
      body: JSON.stringify(changed),
      headers,
      secrets,
      expect: { kind: 'status', status: 400, ...(detailNames ? { detailNames } : {}) },
    });
    const signed = signedFieldsOf(fields);
    switch (mutation.kind) {
      case 'none':
        return this.authenticPost(fields, JSON.stringify(fields), fresh);
      case 'reformat': {
        const withUnsubscribe = { ...fields, UnsubscribeURL: `${this.host.origin}/?Action=Unsubscribe&SubscriptionArn=${TOPIC}:${randomUUID()}` };
        const body = [JSON.stringify(Object.fromEntries(Object.entries(fields).reverse())), JSON.stringify(fields, null, 2), JSON.stringify(withUnsubscribe)][
          mutation.variant % 3
        ];
        return this.authenticPost(fields, body, fresh);
      }
      case 'flip': {
        const field = signed[mutation.field % signed.length];
        const value = fields[field];
        if (value.length === 0) return refused({ ...fields, [field]: 'x' });
        const at = mutation.index % value.length;
        const flipped = value.slice(0, at) + String.fromCharCode(value.charCodeAt(at) ^ (1 << mutation.bit)) + value.slice(at + 1);
        return refused({ ...fields, [field]: flipped });
      }
      case 'swap': {
        const a = signed[mutation.a % signed.length];
        const b = signed[mutation.b % signed.length];
        if (fields[a] === fields[b]) return this.authenticPost(fields, JSON.stringify(fields), fresh);
        return refused({ ...fields, [a]: fields[b], [b]: fields[a] });
      }
      case 'signature': {
        const other = snsMessage(this.authority, { topicArn: TOPIC, origin: this.host.origin, signatureVersion: fields.SignatureVersion as '1' | '2' });
        const { Signature: _signature, ...unsigned } = fields;
        const otherDigest = signSnsFields(unsigned, this.authority.signingKey, fields.SignatureVersion === '1' ? '2' : '1');
        const signature = ['', fields.Signature.slice(0, -4), other.Signature, 'not base64 at all!', otherDigest][mutation.variant % 5];
        return refused({ ...fields, Signature: signature });
      }
      case 'version':
        if (mutation.to === fields.SignatureVersion) return this.authenticPost(fields, JSON.stringify(fields), fresh);
        return refused({ ...fields, SignatureVersion: mutation.to });
      case 'drop': {
        const field = EVERY_FIELD[mutation.field];
        if (fields[field] === undefined) return this.authenticPost(fields, JSON.stringify(fields), fresh);
        const { [field]: _dropped, ...rest } = fields;
        return refused(rest);
      }
      case 'foreign-topic': {
        const foreign = this.resign({ ...fields, TopicArn: FOREIGN_TOPIC });
        return { ...refused(foreign, 'TopicArn'), expect: { kind: 'status', status: 400, reason: 'bad_signature', detailNames: 'TopicArn' } };
      }
      case 'certificate-url': {
        const { origin } = this.host;
        const port = Number(new URL(origin).port);
        const path = SIGNING_CERTIFICATE_PATH;
        const elsewhere = [
          `${origin.replace('https:', 'http:')}${path}`,
          `https://localhost:${port}${path}`,
          `https://127.0.0.1:${port === 65_535 ? port - 1 : port + 1}${path}`,
          `${origin.replace('https://', 'https://user:pass@')}${path}`,
          `${origin}${path.replace('.pem', '.txt')}`,
          `https://sns.us-east-1.amazonaws.com${path}`,
          'not a URL',
          // SNS's host, but not how SNS names a certificate: never fetched.
          `${origin}${path}?x=1`,
          `${origin}${path}#x`,
          `${origin}/SimpleNotificationService-missing.pem`,
        ];
        if (mutation.variant < elsewhere.length) return refused({ ...fields, SigningCertURL: elsewhere[mutation.variant] }, 'SigningCertURL');
        // On SNS's host and named as SNS names them, but no certificate is there: not fetched, so the delivery is answered for SNS to retry.
        return {
          ...refused({ ...fields, SigningCertURL: `${origin}/SimpleNotificationService-${'0'.repeat(32)}.pem` }),
          expect: { kind: 'status', status: 503 },
        };
      }
      case 'subscribe-url': {
        const { origin } = this.host;
        const query = `TopicArn=${encodeURIComponent(TOPIC)}&Token=${fields.Token ?? randomUUID()}`;
        const url = [
          `https://localhost:${new URL(origin).port}/?Action=ConfirmSubscription&${query}`,
          `${origin.replace('https:', 'http:')}/?Action=ConfirmSubscription&${query}`,
          `${origin}/?Action=Unsubscribe&${query}`,
          `${origin}/?Action=ConfirmSubscription&TopicArn=${encodeURIComponent(TOPIC)}`,
          `https://hooks.example.com/?Action=ConfirmSubscription&${query}`,
        ][mutation.variant % 5];
        // Re-signed by SNS: for a notification SubscribeURL is an unsigned extra field.
        const changed = fields.Type === 'Notification' ? { ...fields, SubscribeURL: url } : this.resign({ ...fields, SubscribeURL: url });
        return this.authenticPost(changed, JSON.stringify(changed), fresh);
      }
      case 'raw-delivery':
        return refused(fields, 'RawMessageDelivery', { ...snsHeaders(fields), 'x-amz-sns-rawdelivery': 'true' });
    }
  }

  /** The fields signed again by the stand-in, as SNS would sign them. */
  private resign(fields: SnsMessageFields): SnsMessageFields {
    const { Signature: _signature, ...unsigned } = fields;
    return { ...unsigned, Signature: signSnsFields(unsigned, this.authority.signingKey, unsigned.SignatureVersion as '1' | '2') };
  }

  /** The table, the queue and the stand-in's confirmations against everything answered. */
  async audit(): Promise<SnsAudit> {
    const violations: string[] = [];
    const items = await this.h.inboxItems();
    const rows = items.filter((item) => item.sk === 'delivery');
    const quarantine = items.filter((item) => String(item.sk).startsWith('quarantine#'));
    const expectedKeys = new Set([...this.stored.keys()].map((id) => `${PROVIDER}#${id}`));
    for (const row of rows) if (!expectedKeys.has(String(row.pk))) violations.push(`a row no accepted message explains: ${String(row.pk)}`);
    if (rows.length !== expectedKeys.size) violations.push(`${rows.length} rows for ${expectedKeys.size} accepted messages`);
    const messages = await this.h.takeMessages();
    const unexpected = messages.filter((key) => !expectedKeys.has(key));
    if (unexpected.length > 0) violations.push(`work messages no accepted message explains: ${unexpected.slice(0, 3).join(', ')}`);
    const recorded = this.host.confirmations.slice(this.confirmationsBefore).map((confirmation) => confirmation.token);
    if ([...recorded].sort().join(',') !== [...this.confirmedTokens].sort().join(',')) {
      violations.push(`the stand-in was asked ${recorded.length} confirmations, ${this.confirmedTokens.length} were answered confirmed`);
    }
    if (this.host.confirmations.slice(this.confirmationsBefore).some((confirmation) => confirmation.topicArn !== TOPIC)) {
      violations.push('a confirmation of another topic was requested');
    }
    return {
      violations,
      deliveryRows: rows.length,
      expectedDeliveryRows: expectedKeys.size,
      quarantineItems: quarantine.length,
      expectedQuarantineItems: this.quarantined.size,
      messages: messages.length,
      expectedMessages: expectedKeys.size,
      confirmations: recorded.length,
      expectedConfirmations: this.confirmedTokens.length,
    };
  }

  summary(elapsedMs: number, audit: SnsAudit): string {
    const s = this.stats;
    const table = (title: string, entries: [string, string | number][]) =>
      [title, ...entries.map(([name, value]) => `  ${name.padEnd(28)} ${String(value).padStart(10)}`)].join('\n');
    const sorted = (record: Record<string, number>) => Object.entries(record).sort((a, b) => b[1] - a[1]);
    return [
      table('SNS run', [
        ['cases', s.cases],
        ['posts', s.posts],
        ['elapsed', `${(elapsedMs / 1000).toFixed(1)} s`],
        ['cases with violations', s.violations],
      ]),
      table('by answer', sorted(s.byOutcome)),
      table('by mutation (cases)', sorted(s.byMutation)),
      table('store (actual / expected)', [
        ['delivery rows', `${audit.deliveryRows} / ${audit.expectedDeliveryRows}`],
        ['quarantine items', `${audit.quarantineItems} / ${audit.expectedQuarantineItems}`],
        ['work queue messages', `${audit.messages} / ${audit.expectedMessages}`],
        ['confirmations requested', `${audit.confirmations} / ${audit.expectedConfirmations}`],
      ]),
    ].join('\n');
  }
}

/** The signed fields a message carries (a notification's Subject only when it has one). */
function signedFieldsOf(fields: SnsMessageFields): string[] {
  const names: readonly string[] = fields.Type === 'Notification' ? SIGNED_NOTIFICATION : SIGNED_CONFIRMATION;
  return names.filter((name) => fields[name] !== undefined);
}

function parseUrl(text: string | undefined): URL | undefined {
  try {
    return text === undefined ? undefined : new URL(text);
  } catch {
    return undefined;
  }
}

/** The longest prefix of `text` of at most `maxBytes` in UTF-8, cut between characters. */
function truncateToBytes(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  // A continuation byte (10xxxxxx) is inside a character: cut before that character.
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}
