/**
 * What every provider preset must do, run once per preset against the emulators: accept what
 * the provider's own library signs, byte-exactly (non-ASCII, odd JSON layout, base64-encoded
 * API Gateway bodies); reject one flipped byte; judge freshness with separately configured past
 * and future tolerances; answer malformed headers with a 400 (or the status the provider
 * documents for a refusal) naming the header, never an exception; answer a stored delivery as
 * the provider requires; keep no signature in the stored row. Each preset's test file adds what
 * is its own.
 */
import * as fc from 'fast-check';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import {
  ALL_PROVIDER_FACTS,
  AdapterKind,
  DeliveryStatus,
  MetricName,
  providerFactsOf,
  ProviderRuntimeConfig,
  providerRuntimeConfig,
  SECRETLESS_ADAPTERS,
  URL_SIGNING_ADAPTERS,
} from '../../lib/contract';
import { hmacRuntimeSettings } from '../../lib/private/provider-runtime';
import { ProviderAdapter } from '../../lambda/shared/providers/adapter';
import { adaptersFor } from '../../lambda/shared/providers/registry';
import { HTTP_STATUS } from '../../lambda/shared/runtime/http';
import { deliveryKey } from '../../lambda/shared/stores/inbox';
import { SigningKey } from '../../lambda/shared/signatures/signing-key';
import type { InboxStructure } from './iam-fixture';
import { Answer, answerOf, apiGatewayEvent, EventOptions, InboxHarness, Item, SecretsFixture, sha256Hex } from './inbox-fixture';
import { flipByte, HeaderMap, oddJson, tamperSignature, UNICODE_NOTE } from './senders';

export type HeaderOverrides = Record<string, string | undefined>;

export interface SignOptions {
  /** Unix seconds; default: now by the harness clock. */
  readonly timestamp?: number;
  /** Default: the secret stored for the provider. */
  readonly secret?: string;
  /** The earlier delivery this one retries. */
  readonly retryOf?: HeaderMap;
}

export interface PresetSpec {
  /** The provider's name: its path `/hooks/<name>` and key namespace. */
  readonly name: string;
  readonly adapter: string;
  /** Anything else of the runtime config (the generic scheme of an `hmac` provider). */
  readonly config?: Partial<ProviderRuntimeConfig>;
  /** A signing secret as the provider issues it (for `v1a`: a public key). */
  readonly newSecret: () => string;
  /** A fresh delivery body (new ids every call) carrying `note` in a text field. */
  readonly payload: (note: string) => unknown;
  /**
   * The headers the real sender writes for these bytes at `timestamp` (Unix seconds); a retry of
   * an earlier delivery (`retryOf`) keeps the delivery id the sender keeps across attempts.
   */
  readonly sign: (body: Buffer, secret: string, timestamp: number, retryOf?: HeaderMap) => HeaderMap | Promise<HeaderMap>;
  /** The stable event id the inbox keys the delivery by. */
  readonly eventId: (body: Buffer, headers: HeaderMap) => string;
  /** The event type a `payload` delivery names, as the provider documents it; absent for a provider whose deliveries name none. */
  readonly eventType?: string;
  readonly signatureHeader: string;
  /** Where the signed timestamp is, as a stale rejection names it; absent when none is signed (GitHub). */
  readonly timestampField?: string;
  /** The status a refused signature (or signature header) is answered with, when the provider documents one (Discord: 401); default 400. */
  readonly refusalStatus?: number;
  /**
   * The answer the provider requires once a delivery is stored, instead of the inbox's own
   * (Discord: a deferred interaction response), as the JSON of its body; its log line then says
   * whether it was accepted or a duplicate.
   */
  readonly storedAnswer?: (body: Buffer) => Record<string, unknown>;
  /** Header changes to a validly signed delivery that must be answered malformed (400, or `refusalStatus`) naming `header`. */
  readonly malformed: readonly (readonly [label: string, change: (headers: HeaderMap) => HeaderOverrides, header: string])[];
}

/**
 * One preset served by a verifier on the emulators. `PresetBench.use` registers the jest hooks
 * of the enclosing describe block: a fresh inbox and secret per test, clean logs after it.
 */
export class PresetBench {
  private harness?: InboxHarness;
  private provider?: ProviderRuntimeConfig;
  private secretValue?: string;
  private defaultVerifier?: ReturnType<InboxHarness['verifier']>;

  private constructor(readonly spec: PresetSpec) {}

  static use(spec: PresetSpec, secrets: SecretsFixture = new SecretsFixture()): PresetBench {
    const bench = new PresetBench(spec);
    beforeAll(() => secrets.start());
    afterAll(() => secrets.stop());
    beforeEach(async () => {
      bench.harness = await InboxHarness.create(secrets, spec.name);
      bench.secretValue = spec.newSecret();
      bench.provider = await bench.harness.addProvider(spec.name, spec.adapter, bench.secretValue, spec.config);
      bench.defaultVerifier = undefined;
    });
    afterEach(() => {
      // For every test (docs/DESIGN.md#invariant-9): no log line carries a secret, a body or a signature.
      bench.h.expectLogsClean();
      bench.h.destroy();
    });
    return bench;
  }

  get h(): InboxHarness {
    return this.harness!;
  }

  get config(): ProviderRuntimeConfig {
    return this.provider!;
  }

  get secret(): string {
    return this.secretValue!;
  }

  get path(): string {
    return `/hooks/${this.spec.name}`;
  }

  /** A verifier serving this preset, its runtime config changed by `overrides` (tolerances), judged by the contract's inbox. */
  verifier(overrides: Partial<ProviderRuntimeConfig> = {}): ReturnType<InboxHarness['verifier']> {
    return this.h.verifier({ providers: [{ ...this.config, ...overrides }], judgedBy: contractInbox(this.config) });
  }

  /** The runtime adapter, and the signing keys it makes of the stored secret (or of `secret`). */
  adapter(secret: string = this.secret): { adapter: ProviderAdapter; keys: SigningKey[] } {
    const adapter = adaptersFor([this.config]).get(this.spec.name)!;
    return { adapter, keys: adapter.signingKeys([{ stage: 'AWSCURRENT', value: secret }]) };
  }

  /** The body bytes of `payload`, laid out compactly or oddly. */
  bytes(payload: unknown, layout: 'compact' | 'odd' = 'compact'): Buffer {
    return Buffer.from(layout === 'odd' ? oddJson(payload) : JSON.stringify(payload), 'utf8');
  }

  /** Headers the real sender writes for `body`, by default signed now with the stored secret. */
  async sign(body: Buffer | string, options: SignOptions = {}): Promise<HeaderMap> {
    const bytes = Buffer.from(body);
    const headers = await this.spec.sign(bytes, options.secret ?? this.secret, options.timestamp ?? this.h.clock.seconds, options.retryOf);
    this.h.markSensitive(headers[this.spec.signatureHeader] ?? '');
    return headers;
  }

  /** The API Gateway event of a POST to this preset's path; an undefined header is left out. */
  event(body: Buffer | string, headers: HeaderOverrides, options: EventOptions = {}): APIGatewayProxyEventV2 {
    const event = apiGatewayEvent(body, headers, { path: this.path, ...options });
    this.h.markSensitive(Buffer.from(body).toString('utf8'), event.body ?? '');
    return event;
  }

  /** Posts `body` with exactly these headers (to the test's default verifier); returns the parsed answer. */
  async post(
    body: Buffer | string,
    headers: HeaderOverrides,
    options: EventOptions = {},
    verifier = (this.defaultVerifier ??= this.verifier()),
  ): Promise<Answer> {
    return answerOf(await verifier(this.event(body, headers, options)));
  }

  /** Signs `body` as the sender does, posts it, and returns the parsed answer with the headers sent. */
  async deliver(
    body: Buffer | string,
    options: SignOptions & { base64?: boolean; verifier?: ReturnType<InboxHarness['verifier']> } = {},
  ): Promise<Answer & { headers: HeaderMap }> {
    const headers = await this.sign(body, options);
    return { ...(await this.post(body, headers, { base64: options.base64 }, options.verifier)), headers };
  }

  key(eventId: string): string {
    return deliveryKey(this.spec.name, eventId);
  }

  row(eventId: string, sk?: string): Promise<Item | undefined> {
    return this.h.row(this.key(eventId), sk);
  }

  /** The answer to a delivery of `body` that was stored as `reason`: the inbox's own, or the one the provider requires. */
  expectAnswered(answer: Answer, body: Buffer, reason: 'accepted' | 'duplicate'): void {
    if (!this.spec.storedAnswer) {
      expect(answer).toMatchObject({ statusCode: HTTP_STATUS[reason], result: reason });
      return;
    }
    const { headers: _sent, ...received } = answer as Answer & { headers?: HeaderMap };
    expect(received).toEqual({ statusCode: 200, ...this.spec.storedAnswer(body) });
    expect(this.h.capture.logs('delivery').at(-1)).toMatchObject({ reason });
  }

  /** The stored row of an accepted delivery: these exact bytes, their digest and id, no signature in its meta. */
  async expectStored(body: Buffer, headers: HeaderMap): Promise<Item> {
    const eventId = this.spec.eventId(body, headers);
    const row = await this.row(eventId);
    expect(row).toMatchObject({ pk: this.key(eventId), digest: sha256Hex(body), status: DeliveryStatus.RECEIVED });
    expect((row!.body as Buffer).equals(body)).toBe(true);
    expectNoSignatureIn(row!.meta as Record<string, string>, headers[this.spec.signatureHeader]);
    return row!;
  }
}

/** A generic HMAC scheme for the contract inbox's `hmac` provider: any valid one grants the same. */
const CONTRACT_HMAC_SCHEME = hmacRuntimeSettings({ signatureHeader: 'X-Signature', idJsonPath: 'id' });

/**
 * The inbox whose template judges every preset's AWS calls: one provider of each adapter kind that
 * has a signing secret, named after its kind, the preset under test in its kind's place (its signing
 * secret bound to that provider's; the others' bound to nothing of the test). Every preset and every
 * tolerance is judged by the same template, so the contract synthesizes one for the whole run.
 */
function contractInbox(preset: ProviderRuntimeConfig): InboxStructure {
  const kinds = ALL_PROVIDER_FACTS.map((facts) => facts.kind as string).filter((kind) => !SECRETLESS_ADAPTERS.includes(kind));
  return {
    providers: kinds.map((kind) =>
      providerRuntimeConfig({
        name: kind,
        adapter: kind,
        secretId: kind === preset.adapter ? preset.secretId : undefined,
        ...(kind === AdapterKind.HMAC ? { hmac: CONTRACT_HMAC_SCHEME } : {}),
        ...(URL_SIGNING_ADAPTERS.includes(kind) ? { notificationUrl: `https://hooks.example/${kind}` } : {}),
      }),
    ),
  };
}

/** A row's metadata names no signature header and carries no signature value. */
function expectNoSignatureIn(meta: Record<string, string>, signature: string | undefined): void {
  expect(Object.keys(meta).filter((name) => /signature|hmac/i.test(name))).toEqual([]);
  if (signature) expect(JSON.stringify(meta)).not.toContain(signature);
}

/** Every test the preset contract asks of `bench`'s preset. */
export function presetContract(bench: PresetBench): void {
  const { spec } = bench;
  const badSignature = { ok: false, reason: 'bad_signature', detail: expect.stringContaining(spec.signatureHeader) };
  const refused = spec.refusalStatus ?? 400;
  const storedStatus = spec.storedAnswer ? 200 : HTTP_STATUS.accepted;

  describe('signatures from the sender', () => {
    test("verify() accepts the sender's signature; any flipped body byte, a flipped signature character or another secret is bad_signature", async () => {
      const { adapter, keys } = bench.adapter();
      const body = bench.bytes(spec.payload('a plain delivery body'));
      const now = bench.h.clock.seconds;
      const headers = await bench.sign(body);

      expect(adapter.verify(headers, body, keys, now)).toMatchObject({ ok: true, key: keys[0] });
      for (let index = 0; index < body.length; index++) {
        expect(adapter.verify(headers, flipByte(body, index), keys, now)).toEqual(badSignature);
      }
      const tampered = { ...headers, [spec.signatureHeader]: tamperSignature(headers[spec.signatureHeader]) };
      expect(adapter.verify(tampered, body, keys, now)).toEqual(badSignature);
      expect(adapter.verify(await bench.sign(body, { secret: spec.newSecret() }), body, keys, now)).toEqual(badSignature);
    });

    test('garbage in any header is a rejection, never an exception', async () => {
      const { adapter, keys } = bench.adapter();
      const body = bench.bytes(spec.payload('a body for the fuzzer'));
      const headers = await bench.sign(body);
      const names = Object.keys(headers);
      const garbage = fc.option(fc.oneof(fc.string({ maxLength: 200 }), fc.constantFrom('', ' ', ',', '=', 'v1,', 't=,v1=', 'sha256=')), { nil: undefined });
      fc.assert(
        fc.property(fc.constantFrom(...names), garbage, (name, value) => {
          const verdict = adapter.verify({ ...headers, [name]: value }, body, keys, bench.h.clock.seconds);
          // Only an unsigned header (an event name, a delivery id) may change and still verify.
          if (!verdict.ok) expect(['malformed', 'bad_signature', 'stale_timestamp']).toContain(verdict.reason);
          else if (name === spec.signatureHeader) expect(value).toBe(headers[name]);
          expect(() => adapter.admit({ ...headers, [name]: value }, body)).not.toThrow();
        }),
        { numRuns: 300 },
      );
    });
  });

  describe('filters at the edge', () => {
    test('a filter keeping the type the delivery names stores it; one keeping only another type answers filtered and stores nothing', async () => {
      expect({ namesAType: spec.eventType !== undefined }).toEqual({ namesAType: providerFactsOf(spec.adapter)?.eventType !== undefined });
      if (spec.eventType === undefined) return;
      const kept = bench.bytes(spec.payload('a kept delivery'));
      const keeping = bench.verifier({ filter: { eventTypes: [spec.eventType] } });
      bench.expectAnswered(await bench.deliver(kept, { verifier: keeping }), kept, 'accepted');
      await bench.h.takeMessages();

      const dropping = bench.verifier({ filter: { eventTypes: [`other.${spec.eventType}`] } });
      const dropped = bench.bytes(spec.payload('a dropped delivery'));
      const answer = await bench.deliver(dropped, { verifier: dropping });
      expect(answer.statusCode).toBe(200);
      expect(bench.h.capture.logs('delivery').at(-1)).toMatchObject({ reason: 'filtered', eventType: spec.eventType, dedupeResult: 'not_stored' });
      expect(await bench.h.inboxItems()).toHaveLength(1);
      expect(await bench.h.takeMessages()).toEqual([]);
      expect(bench.h.capture.metric(MetricName.FILTERED, spec.name)).toBe(1);
    });
  });

  describe('raw bytes through the verifier handler', () => {
    test.each([
      ['non-ASCII text and emoji', 'compact', false],
      ['non-ASCII text and emoji, base64-encoded by API Gateway', 'compact', true],
      ['JSON with odd whitespace and key order', 'odd', false],
      ['JSON with odd whitespace and key order, base64-encoded by API Gateway', 'odd', true],
    ] as const)('%s: accepted and stored byte-exactly; a re-signed retry is a duplicate', async (_name, layout, base64) => {
      const body = bench.bytes(spec.payload(UNICODE_NOTE), layout);
      const verifier = bench.verifier();

      const first = await bench.deliver(body, { base64, verifier });

      bench.expectAnswered(first, body, 'accepted');
      await bench.expectStored(body, first.headers);
      expect(await bench.h.takeMessages()).toEqual([bench.key(spec.eventId(body, first.headers))]);
      // The sender retries later: the same bytes, signed again.
      bench.h.clock.advance(5_000);
      bench.expectAnswered(await bench.deliver(body, { base64, verifier, retryOf: first.headers }), body, 'duplicate');
      expect(await bench.h.inboxItems()).toHaveLength(1);
      expect(bench.h.capture.metric(MetricName.ACCEPTED, spec.name)).toBe(1);
    });

    test('a flipped body byte or signature character is answered bad_signature (400, or the refusal status) naming the header; nothing is stored', async () => {
      const body = bench.bytes(spec.payload(UNICODE_NOTE));
      const headers = await bench.sign(body);
      const verifier = bench.verifier();

      for (const event of [
        bench.event(flipByte(body), headers),
        bench.event(flipByte(body), headers, { base64: true }),
        bench.event(body, { ...headers, [spec.signatureHeader]: tamperSignature(headers[spec.signatureHeader]) }),
      ]) {
        expect(answerOf(await verifier(event))).toEqual({
          statusCode: refused,
          result: 'bad_signature',
          detail: expect.stringContaining(spec.signatureHeader),
        });
      }
      expect(bench.h.capture.metric(MetricName.BAD_SIGNATURE, spec.name)).toBe(3);
      await bench.h.expectNothingAdmitted();
    });
  });

  describe('nesting: what is admitted can be processed', () => {
    // The rule, stated here: a body may nest JSON arrays and objects 512 levels deep (its own object
    // the first level), whatever the provider; deeper, it is refused 400 body_too_deep naming the limit.
    const LIMIT = 512;
    /** The payload with one more member in front: arrays nested so the body is `depth` levels deep. */
    const nestedBody = (depth: number) => {
      const text = JSON.stringify(spec.payload('a deeply nested delivery'));
      return Buffer.from(`{"nested":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)},${text.slice(1)}`, 'utf8');
    };

    test.each([6_000, LIMIT + 1])(
      'a signed body %i levels deep is answered 400 body_too_deep naming the limit, counted, and nothing is stored',
      async (depth) => {
        const answer = await bench.deliver(nestedBody(depth));
        expect(answer).toMatchObject({ statusCode: 400, result: 'body_too_deep', detail: expect.stringContaining(`${LIMIT} levels`) });
        expect(bench.h.capture.metric(MetricName.BODY_TOO_DEEP, spec.name)).toBe(1);
        await bench.h.expectNothingAdmitted();
      },
    );

    test(`a signed body ${LIMIT} levels deep is stored`, async () => {
      expect(await bench.deliver(nestedBody(LIMIT))).toMatchObject({ statusCode: storedStatus });
      expect(bench.h.capture.metric(MetricName.BODY_TOO_DEEP, spec.name)).toBe(0);
      expect(await bench.h.inboxItems()).toHaveLength(1);
    });
  });

  if (spec.timestampField) {
    const field = spec.timestampField;
    test.each([
      [60, 10],
      [10, 60],
    ])('freshness: past %i s and future %i s are configured separately, each inclusive', async (past, future) => {
      const verifier = bench.verifier({ tolerancePastSeconds: past, toleranceFutureSeconds: future });
      const at = (offset: number) =>
        bench.deliver(bench.bytes(spec.payload('a delivery signed at an offset')), { timestamp: bench.h.clock.seconds + offset, verifier });

      expect(await at(-past)).toMatchObject({ statusCode: storedStatus });
      expect(await at(future)).toMatchObject({ statusCode: storedStatus });
      expect(await at(-past - 1)).toMatchObject({ statusCode: refused, result: 'stale_timestamp', detail: `${field} is older than the tolerance` });
      expect(await at(future + 1)).toMatchObject({ statusCode: refused, result: 'stale_timestamp', detail: `${field} is too far in the future` });
      expect(await bench.h.inboxItems()).toHaveLength(2);
      expect(bench.h.capture.metric(MetricName.STALE_TIMESTAMP, spec.name)).toBe(2);
    });
  }

  test.each(spec.malformed)('malformed: %s is answered 400 (or the refusal status) naming the header; nothing is stored', async (_label, change, header) => {
    const body = bench.bytes(spec.payload('a delivery with a malformed header'));
    const headers = await bench.sign(body);

    const answer = answerOf(await bench.verifier()(bench.event(body, { ...headers, ...change(headers) })));

    expect(answer).toEqual({ statusCode: refused, result: 'malformed', detail: expect.stringContaining(header) });
    expect(bench.h.capture.metric(MetricName.MALFORMED, spec.name)).toBe(1);
    await bench.h.expectNothingAdmitted();
  });
}
