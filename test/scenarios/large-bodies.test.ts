import { randomUUID } from 'node:crypto';
import { HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { DeliveryStatus, MetricName } from '../../lib/contract';
import { bodyObjectKey, responseObjectKey } from '../../lambda/shared/stores/body-store';
import { S3BodyStore } from '../../lambda/shared/stores/s3-body-store';
import { createBodyBucket } from '#twin/testing';
import { answerlineBody, InboxHarness, keyOf, prose, PROVIDER, SecretsFixture, sha256Hex, taskIdOf } from '../support/inbox-fixture';

const INLINE_BODY_BYTES = 64 * 1024;
const MAX_BODY_BYTES = 6_000_000;

const secrets = new SecretsFixture();
const s3 = new S3Client({ forcePathStyle: true });
let h: InboxHarness;
let bodies: S3BodyStore;

beforeAll(() => secrets.start());
afterAll(async () => {
  s3.destroy();
  await secrets.stop();
});
beforeEach(async () => {
  h = await InboxHarness.create(secrets, 'bodies');
  await createBodyBucket(s3, h.names);
  bodies = new S3BodyStore(s3, h.names.bodyBucket);
});
afterEach(() => {
  h.expectLogsClean();
  h.destroy();
});

const verifier = () => h.verifier({ bodies: h.bodyStore('verifier'), inlineBodyBytes: INLINE_BODY_BYTES, maxBodyBytes: MAX_BODY_BYTES });
const processor = () => h.processor({ bodies: h.bodyStore('processor'), inlineBodyBytes: INLINE_BODY_BYTES });

/** An Answerline delivery whose answer makes the whole body exactly `bytes` long. */
function bodyOfSize(bytes: number, idempotencyKey: string): string {
  const id = `tsk_${randomUUID()}`;
  const room = bytes - Buffer.byteLength(answerlineBody({ id, idempotencyKey, response: { result: { answer: '' } } }));
  // Non-ASCII text and emoji (7 bytes a unit): multi-byte characters must survive byte for byte.
  const unit = 'é🙂a';
  const answer = unit.repeat(Math.floor(room / 7)) + 'x'.repeat(room % 7);
  return answerlineBody({ id, idempotencyKey, response: { result: { answer } } });
}

describe('a body too large for a one-unit row is written once, in an item of its own beside the row', () => {
  test('a 16 KiB delivery: admitted, repeated, altered and processed; the row stays small, the body item holds the exact bytes', async () => {
    const body = answerlineBody({ idempotencyKey: 'job-16k', response: { result: { answer: prose(16 * 1024) } } });
    const handler = verifier();
    expect(await h.deliver(body, handler)).toMatchObject({ statusCode: 202, result: 'accepted' });
    expect(await h.deliver(body, handler)).toMatchObject({ statusCode: 200, result: 'duplicate' });
    const altered = body.replace('ka', 'ko');
    expect(await h.deliver(altered, handler)).toMatchObject({ statusCode: 200, result: 'quarantined' });

    const digest = sha256Hex(body);
    const row = await h.row(keyOf(body));
    expect(row).toMatchObject({ bodyItem: true, digest, status: DeliveryStatus.RECEIVED });
    expect(row).not.toHaveProperty('body');
    expect(row).not.toHaveProperty('bodyRef');
    expect(Buffer.from((await h.row(keyOf(body), `body#${digest}`))!.body as Uint8Array).toString('utf8')).toBe(body);

    expect(await h.drain(processor())).toEqual({ received: 1, failed: 0 });
    expect(await h.row(keyOf(body))).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: 'winner', bodyItem: true });
    expect(await h.result('job-16k')).toMatchObject({ taskId: taskIdOf(body), response: JSON.stringify(JSON.parse(body).response) });
    // The altered copy is quarantined whole; its body item, written before its insert was refused, expires with the row.
    const quarantined = (await h.inboxItems()).find((item) => String(item.sk).startsWith('quarantine#'));
    expect(Buffer.from(quarantined!.body as Uint8Array).toString('utf8')).toBe(altered);
    expect(Buffer.from((await h.row(keyOf(body), `body#${digest}`))!.body as Uint8Array).toString('utf8')).toBe(body);
  });
});

describe('bodies too large for a row go to S3 and come back byte for byte', () => {
  test.each([
    ['1 MB', 1_000_000],
    ['6 MB', MAX_BODY_BYTES],
  ])('a %s delivery is stored in S3, pointed at by its row, and processed into its result', async (_label, size) => {
    const body = bodyOfSize(size, `job-${size}`);
    expect(Buffer.byteLength(body)).toBe(size);

    expect(await h.deliver(body, verifier())).toMatchObject({ statusCode: 202, result: 'accepted' });

    const digest = sha256Hex(body);
    const row = await h.row(keyOf(body));
    expect(row).toMatchObject({ bodyRef: bodyObjectKey(PROVIDER, digest), digest, status: DeliveryStatus.RECEIVED });
    expect(row).not.toHaveProperty('body');
    expect((await bodies.get(row!.bodyRef as string)).equals(Buffer.from(body))).toBe(true);

    expect(await h.drain(processor())).toEqual({ received: 1, failed: 0 });
    expect(await h.row(keyOf(body))).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: 'winner' });
    // The result is as large as the body: it lives in S3 too, and the item points at it.
    const result = await h.result(`job-${size}`);
    const response = JSON.stringify(JSON.parse(body).response);
    expect(result).toMatchObject({ taskId: taskIdOf(body), responseRef: responseObjectKey(PROVIDER, sha256Hex(response)) });
    expect(result).not.toHaveProperty('response');
    expect((await bodies.get(result!.responseRef as string)).toString('utf8')).toBe(response);
  });

  test('a small result that wins over a large one replaces the pointer with the inline response', async () => {
    const large = bodyOfSize(200_000, 'job-mixed');
    const small = answerlineBody({ idempotencyKey: 'job-mixed-r1', createdAt: '2026-09-18T12:00:00.000Z' });
    const handler = processor();
    for (const body of [large, small]) {
      expect(await h.deliver(body, verifier())).toMatchObject({ statusCode: 202 });
      expect(await h.drain(handler)).toEqual({ received: 1, failed: 0 });
    }
    const result = await h.result('job-mixed');
    expect(result).toMatchObject({ taskId: taskIdOf(small), response: JSON.stringify(JSON.parse(small).response), version: 2 });
    expect(result).not.toHaveProperty('responseRef');
  });

  test('a body at the inline limit stays in the row; one byte more goes to S3', async () => {
    const inline = bodyOfSize(INLINE_BODY_BYTES, 'job-inline');
    const outside = bodyOfSize(INLINE_BODY_BYTES + 1, 'job-outside');
    expect(await h.deliver(inline, verifier())).toMatchObject({ statusCode: 202 });
    expect(await h.deliver(outside, verifier())).toMatchObject({ statusCode: 202 });
    expect(Buffer.from((await h.row(keyOf(inline)))!.body as Uint8Array).toString('utf8')).toBe(inline);
    expect(await h.row(keyOf(outside))).toMatchObject({ bodyRef: bodyObjectKey(PROVIDER, sha256Hex(outside)) });
  });

  test('a duplicate of a large body writes nothing new; an altered one is quarantined with its own object', async () => {
    const body = bodyOfSize(300_000, 'job-dup');
    const handler = verifier();
    expect(await h.deliver(body, handler)).toMatchObject({ result: 'accepted' });
    expect(await h.deliver(body, handler)).toMatchObject({ statusCode: 200, result: 'duplicate' });

    const altered = body.replace('é', 'e');
    expect(taskIdOf(altered)).toBe(taskIdOf(body));
    expect(await h.deliver(altered, handler)).toMatchObject({ statusCode: 200, result: 'quarantined' });

    const items = await h.inboxItems();
    expect(items).toHaveLength(2);
    const quarantined = items.find((item) => String(item.sk).startsWith('quarantine#'));
    expect(quarantined).toMatchObject({ bodyRef: bodyObjectKey(PROVIDER, sha256Hex(altered)), count: 1 });
    expect((await bodies.get(quarantined!.bodyRef as string)).toString('utf8')).toBe(altered);
    expect(await h.row(keyOf(body))).toMatchObject({ bodyRef: bodyObjectKey(PROVIDER, sha256Hex(body)) });
    expect(h.capture.metric(MetricName.QUARANTINED, PROVIDER)).toBe(1);
  });

  test('a body over the maximum gets 413 and leaves neither a row nor an object', async () => {
    const body = bodyOfSize(MAX_BODY_BYTES + 1, 'job-too-big');
    expect(await h.deliver(body, verifier())).toMatchObject({ statusCode: 413, result: 'too_large' });
    expect(await h.inboxItems()).toEqual([]);
    await expect(s3.send(new HeadObjectCommand({ Bucket: h.names.bodyBucket, Key: bodyObjectKey(PROVIDER, sha256Hex(body)) }))).rejects.toMatchObject({
      name: 'NotFound',
    });
  });

  test('when S3 is unreachable the delivery is answered 503 and nothing is stored', async () => {
    const unreachable = new S3BodyStore(new S3Client({ endpoint: 'http://127.0.0.1:9', forcePathStyle: true, maxAttempts: 1 }), h.names.bodyBucket);
    const body = bodyOfSize(200_000, 'job-s3-down');
    const answer = await h.deliver(body, h.verifier({ bodies: unreachable, inlineBodyBytes: INLINE_BODY_BYTES, maxBodyBytes: MAX_BODY_BYTES }));
    expect(answer).toMatchObject({ statusCode: 503, result: 'store_error' });
    expect(await h.inboxItems()).toEqual([]);
    expect(await h.takeMessages()).toEqual([]);
  });
});
