import { execFileSync } from 'node:child_process';
import { createHmac, randomBytes, randomInt, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { AdapterKind, MetricName } from '../../../../../lib/contract';
import { linearAdapter } from '../../../../../lambda/shared/providers/linear/adapter';
import { PresetBench, presetContract, PresetSpec } from '../../../../support/preset-contract';
import { flipByte, HeaderMap, tamperSignature } from '../../../../support/senders';

const SIGNATURE = 'linear-signature';
const DELIVERY = 'linear-delivery';

/** A webhook's signing secret, as Linear issues it (used as text). */
const linearSecret = () => `lin_wh_${randomBytes(24).toString('base64url')}`;

/** An `Issue` update as Linear sends it: `webhookTimestamp` is when this attempt was sent, in milliseconds. */
const issueUpdated = (note: string, sentAtMs: number, entityId: string = randomUUID(), createdAt = new Date(sentAtMs - randomInt(1, 5000)).toISOString()) => ({
  action: 'update',
  actor: { id: 'aacdca22-6266-4c0a-ab3c-8fa70a26765c', type: 'user', name: 'Ada' },
  createdAt,
  data: { id: entityId, identifier: 'ENG-42', title: note, priority: 2, updatedAt: createdAt },
  updatedFrom: { title: 'an older title', updatedAt: '2026-01-01T00:00:00.000Z' },
  url: 'https://linear.app/acme/issue/ENG-42/an-issue',
  type: 'Issue',
  organizationId: '539068e2-ae88-4d09-bd75-22eb4a59612f',
  webhookId: '000042e3-d123-4980-b49f-8e140eef9329',
  webhookTimestamp: sentAtMs,
});

/** Linear's headers, the signature by Linear's rule restated here: hex HMAC-SHA256 of the raw body. */
function linearHeaders(body: Buffer, secret: string, delivery: string = randomUUID()): HeaderMap {
  return {
    [SIGNATURE]: createHmac('sha256', secret).update(body).digest('hex'),
    [DELIVERY]: delivery,
    'linear-event': 'Issue',
    'user-agent': 'Linear-Webhook',
    'content-type': 'application/json; charset=utf-8',
  };
}

/** The event id by the preset's rule, restated: webhookId, type, action, data.id (or nothing), createdAt, each URI-escaped, joined with `:`. */
function linearEventId(body: Buffer): string {
  const event = JSON.parse(body.toString('utf8')) as { webhookId: string; type: string; action: string; data?: { id?: string }; createdAt: string };
  return [event.webhookId, event.type, event.action, event.data?.id ?? '', event.createdAt].map(encodeURIComponent).join(':');
}

const spec: PresetSpec = {
  name: 'linear',
  adapter: AdapterKind.LINEAR,
  eventType: 'Issue',
  newSecret: linearSecret,
  // The body is dated by the harness clock; the contract's re-signed retry keeps these bytes.
  payload: (note) => issueUpdated(note, bench.h.clock.seconds * 1000),
  sign: (body, secret, _timestamp, retryOf) => linearHeaders(body, secret, retryOf?.[DELIVERY]),
  eventId: linearEventId,
  signatureHeader: SIGNATURE,
  // The timestamp is inside the signed body, so the contract cannot move it: freshness is tested below.
  malformed: [
    ['a missing Linear-Signature', () => ({ [SIGNATURE]: undefined }), SIGNATURE],
    ['a base64 signature instead of hex', (h) => ({ [SIGNATURE]: Buffer.from(h[SIGNATURE], 'hex').toString('base64') }), SIGNATURE],
    ['a signature with a sha256= prefix', (h) => ({ [SIGNATURE]: `sha256=${h[SIGNATURE]}` }), SIGNATURE],
    ['a truncated signature', (h) => ({ [SIGNATURE]: h[SIGNATURE].slice(0, -2) }), SIGNATURE],
  ],
};

const bench = PresetBench.use(spec);

presetContract(bench);

/** Runs Linear's own `LinearWebhookClient.verify` on each case, in a node process of its own (the SDK is ESM-only). */
function linearSdkVerify(cases: readonly { secret: string; body: Buffer; signature: string }[]): { valid: boolean; error?: string }[] {
  const input = JSON.stringify(cases.map((c) => ({ ...c, body: c.body.toString('base64') })));
  return JSON.parse(execFileSync(process.execPath, [join(__dirname, 'linear-sdk-verify.mjs')], { input, encoding: 'utf8' })) as {
    valid: boolean;
    error?: string;
  }[];
}

describe("Linear's own SDK judges the same deliveries", () => {
  test('fresh: valid for both; a flipped byte, another secret or a body dated two minutes ago: refused by both', () => {
    // The SDK reads the real clock.
    const nowMs = Date.now();
    const secret = linearSecret();
    const { adapter, keys } = bench.adapter(secret);
    const fresh = bench.bytes(issueUpdated('Grüße aus Köln 🚀', nowMs));
    const old = bench.bytes(issueUpdated('sent two minutes ago', nowMs - 120_000));
    const sign = (body: Buffer, key = secret) => linearHeaders(body, key)[SIGNATURE];
    const nowSeconds = Math.floor(nowMs / 1000);

    expect(
      linearSdkVerify([
        { secret, body: fresh, signature: sign(fresh) },
        { secret, body: flipByte(fresh), signature: sign(fresh) },
        { secret, body: fresh, signature: sign(fresh, linearSecret()) },
        { secret, body: old, signature: sign(old) },
      ]),
    ).toEqual([
      { valid: true },
      { valid: false, error: 'Invalid webhook signature' },
      { valid: false, error: 'Invalid webhook signature' },
      { valid: false, error: 'Invalid webhook timestamp' },
    ]);
    expect(adapter.verify({ [SIGNATURE]: sign(fresh) }, fresh, keys, nowSeconds)).toMatchObject({ ok: true, key: keys[0], signedAtMs: expect.any(Number) });
    expect(adapter.verify({ [SIGNATURE]: sign(fresh) }, flipByte(fresh), keys, nowSeconds)).toMatchObject({ ok: false, reason: 'bad_signature' });
    expect(adapter.verify({ [SIGNATURE]: sign(fresh, linearSecret()) }, fresh, keys, nowSeconds)).toMatchObject({ ok: false, reason: 'bad_signature' });
    // The preset's default, as Linear recommends: a minute each way.
    const minute = adapterWithTolerance(secret, 60, 60);
    expect(minute.adapter.verify({ [SIGNATURE]: sign(old) }, old, minute.keys, nowSeconds)).toMatchObject({ ok: false, reason: 'stale_timestamp' });
  });
});

function adapterWithTolerance(secret: string, pastSeconds: number, futureSeconds: number) {
  const adapter = linearAdapter({ ...bench.config, tolerancePastSeconds: pastSeconds, toleranceFutureSeconds: futureSeconds });
  return { adapter, keys: adapter.signingKeys([{ stage: 'AWSCURRENT', value: secret }]) };
}

describe('freshness from the signed webhookTimestamp', () => {
  test.each([
    [60, 10],
    [10, 60],
  ])('past %i s and future %i s are configured separately, each inclusive; a stale body is refused naming the field', async (past, future) => {
    const verifier = bench.verifier({ tolerancePastSeconds: past, toleranceFutureSeconds: future });
    const at = (offsetSeconds: number) =>
      bench.deliver(bench.bytes(issueUpdated('dated at an offset', (bench.h.clock.seconds + offsetSeconds) * 1000)), { verifier });

    expect(await at(-past)).toMatchObject({ statusCode: 202 });
    expect(await at(future)).toMatchObject({ statusCode: 202 });
    expect(await at(-past - 1)).toMatchObject({ statusCode: 400, result: 'stale_timestamp', detail: 'webhookTimestamp is older than the tolerance' });
    expect(await at(future + 1)).toMatchObject({ statusCode: 400, result: 'stale_timestamp', detail: 'webhookTimestamp is too far in the future' });
    expect(await bench.h.inboxItems()).toHaveLength(2);
    expect(bench.h.capture.metric(MetricName.STALE_TIMESTAMP, 'linear')).toBe(2);
  });

  test.each([
    ['missing', undefined],
    ['a string', '1789000000000'],
    ['a fraction', 1789000000000.5],
    ['negative', -1],
    ['null', null],
  ])('a webhookTimestamp that is %s is answered 400 naming it, once the signature matched; with a bad signature it is bad_signature', async (_name, value) => {
    const body = bench.bytes({ ...issueUpdated('badly dated', bench.h.clock.seconds * 1000), webhookTimestamp: value });
    const headers = await bench.sign(body);

    expect(await bench.post(body, headers)).toEqual({ statusCode: 400, result: 'malformed', detail: 'webhookTimestamp is missing or not Unix milliseconds' });
    expect(await bench.post(body, { ...headers, [SIGNATURE]: tamperSignature(headers[SIGNATURE]) })).toMatchObject({
      statusCode: 400,
      result: 'bad_signature',
    });
    await bench.h.expectNothingAdmitted();
  });

  test('a body that is not JSON is malformed after its signature matched', async () => {
    const body = Buffer.from('webhookTimestamp=1789000000000');
    expect(await bench.post(body, await bench.sign(body))).toEqual({ statusCode: 400, result: 'malformed', detail: 'body is not a JSON object' });
  });
});

describe('the event id comes from the signed body', () => {
  test('a retry, sent anew with a later webhookTimestamp (other bytes), is a duplicate, not an altered copy; Linear-Delivery is only metadata', async () => {
    const sentAt = bench.h.clock.seconds * 1000;
    const event = issueUpdated('retried by Linear', sentAt);
    const first = await bench.deliver(bench.bytes(event));
    bench.h.clock.advance(60_000);
    const retry = await bench.deliver(bench.bytes({ ...event, webhookTimestamp: sentAt + 60_000 }), { retryOf: first.headers });

    expect([first, retry].map((answer) => answer.result)).toEqual(['accepted', 'duplicate']);
    const eventId = linearEventId(bench.bytes(event));
    expect(await bench.h.takeMessages()).toEqual([bench.key(eventId)]);
    expect((await bench.row(eventId))!.meta).toMatchObject({ [DELIVERY]: first.headers[DELIVERY], 'linear-event': 'Issue' });
    expect(bench.h.capture.metric(MetricName.QUARANTINED, 'linear')).toBe(0);
  });

  test('one change of many entities at once (same createdAt) is one event per entity', async () => {
    const sentAt = bench.h.clock.seconds * 1000;
    const createdAt = new Date(sentAt - 100).toISOString();
    const answers = [];
    for (const entityId of [randomUUID(), randomUUID()]) answers.push(await bench.deliver(bench.bytes(issueUpdated('bulk edit', sentAt, entityId, createdAt))));

    expect(answers.map((answer) => answer.result)).toEqual(['accepted', 'accepted']);
    expect(await bench.h.inboxItems()).toHaveLength(2);
  });

  test('an event without an entity (an OAuth app revoked) is keyed without one', async () => {
    const sentAt = bench.h.clock.seconds * 1000;
    const revoked = {
      type: 'OAuthApp',
      action: 'revoked',
      createdAt: new Date(sentAt).toISOString(),
      organizationId: 'org',
      oauthClientId: 'client',
      webhookId: 'wh-1',
      webhookTimestamp: sentAt,
    };
    const answer = await bench.deliver(bench.bytes(revoked));

    expect(answer).toEqual(expect.objectContaining({ statusCode: 202, result: 'accepted' }));
    expect(await bench.row(`wh-1:OAuthApp:revoked::${encodeURIComponent(revoked.createdAt)}`)).toBeDefined();
  });

  test.each([
    ['no webhookId', { webhookId: undefined }, 'webhookId'],
    ['a numeric type', { type: 7 }, 'type'],
    ['no action', { action: undefined }, 'action'],
    ['no createdAt', { createdAt: undefined }, 'createdAt'],
    ['a numeric data.id', { data: { id: 42 } }, 'data.id'],
    ['an over-long webhookId', { webhookId: 'w'.repeat(129) }, 'webhookId'],
  ])('a verified body with %s is answered 400 naming the field; nothing is stored', async (_name, change, field) => {
    const body = bench.bytes({ ...issueUpdated('incomplete', bench.h.clock.seconds * 1000), ...change });
    expect(await bench.deliver(body)).toMatchObject({ statusCode: 400, result: 'malformed', detail: expect.stringContaining(field) });
    await bench.h.expectNothingAdmitted();
  });
});
