/**
 * The results store's conditional offer against the DynamoDB emulator: a result is stored only
 * when it outranks the job's stored winner (COMPLETED over FAILED, then later created, then the
 * greater task id), a repeat of the winner's own offer is recognised, and every decision counts
 * one version more.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import type { JobObservation } from '../../../../lambda/shared/providers/adapter';
import { DynamoDbResultsStore, resultKey } from '../../../../lambda/shared/stores/results-store';
import { S3BodyStore } from '../../../../lambda/shared/stores/s3-body-store';
import { createBodyBucket, createTables, resourceNames } from '#twin/testing';
import { decodeItem, sha256Hex, uniqueName } from '../../../support/inbox-fixture';
import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { inflateRawSync } from 'node:zlib';

const dynamodb = new DynamoDBClient({});
let table: string;
let store: DynamoDbResultsStore;
/** The store's clock (what `winnerOf` judges expiry by): the time the offers below are made at. */
let clock = 1;

beforeEach(async () => {
  const names = resourceNames(uniqueName('results-store'));
  await createTables(dynamodb, names);
  table = names.resultsTable;
  clock = 1;
  store = new DynamoDbResultsStore(dynamodb, table, { now: () => clock });
});
afterAll(() => dynamodb.destroy());

const observation = (taskId: string, status: 'COMPLETED' | 'FAILED', createdAt: string, jobKey = 'job-1'): JobObservation => ({
  jobKey,
  taskId,
  status,
  createdAt,
  response: JSON.stringify({ taskId }),
});
const offer = (eventKey: string, o: JobObservation, responseRef?: string) =>
  store.offer({ provider: 'answerline', eventKey, observation: o, now: 1, ...(responseRef ? { responseRef } : {}) });

async function stored(jobKey = 'job-1') {
  const out = await dynamodb.send(new GetItemCommand({ TableName: table, Key: { pk: { S: resultKey('answerline', jobKey) } }, ConsistentRead: true }));
  return out.Item && decodeItem(out.Item);
}

test('the first result wins with version 1; its own repeat is already_won with the same version; a lower one is lost', async () => {
  const first = observation('tsk_a', 'COMPLETED', '2026-09-18T10:00:00.000000000Z');
  expect(await offer('answerline#tsk_a', first)).toEqual({ outcome: 'won', version: 1 });
  expect(await offer('answerline#tsk_a', first)).toEqual({ outcome: 'already_won', version: 1 });
  expect(await offer('answerline#tsk_old', observation('tsk_old', 'COMPLETED', '2026-09-18T09:00:00.000000000Z'))).toEqual({ outcome: 'lost' });
  expect(await stored()).toMatchObject({ taskId: 'tsk_a', eventKey: 'answerline#tsk_a', version: 1 });
});

test('a later COMPLETED replaces the winner (version 2); a FAILED created later never replaces a COMPLETED', async () => {
  await offer('answerline#tsk_a', observation('tsk_a', 'COMPLETED', '2026-09-18T10:00:00.000000000Z'));
  expect(await offer('answerline#tsk_b', observation('tsk_b', 'COMPLETED', '2026-09-18T11:00:00.000000000Z'))).toEqual({ outcome: 'won', version: 2 });
  expect(await offer('answerline#tsk_f', observation('tsk_f', 'FAILED', '2026-09-18T12:00:00.000000000Z'))).toEqual({ outcome: 'lost' });
  expect(await store.winnerOf('answerline', 'job-1')).toEqual({ eventKey: 'answerline#tsk_b', version: 2 });
});

test('a COMPLETED replaces a FAILED created later; equal times fall to the greater task id', async () => {
  await offer('answerline#tsk_f', observation('tsk_f', 'FAILED', '2026-09-18T12:00:00.000000000Z'));
  expect(await offer('answerline#tsk_a', observation('tsk_a', 'COMPLETED', '2026-09-18T10:00:00.000000000Z'))).toMatchObject({ outcome: 'won' });
  expect(await offer('answerline#tsk_z', observation('tsk_z', 'COMPLETED', '2026-09-18T10:00:00.000000000Z'))).toMatchObject({ outcome: 'won', version: 3 });
  expect(await offer('answerline#tsk_m', observation('tsk_m', 'COMPLETED', '2026-09-18T10:00:00.000000000Z'))).toEqual({ outcome: 'lost' });
});

test('a result held by reference replaces the inline one, and the reverse', async () => {
  await offer('answerline#tsk_a', observation('tsk_a', 'COMPLETED', '2026-09-18T10:00:00.000000000Z'));
  expect(await stored()).toHaveProperty('response');
  await offer('answerline#tsk_b', observation('tsk_b', 'COMPLETED', '2026-09-18T11:00:00.000000000Z'), 'responses/answerline/abc');
  const byRef = await stored();
  expect(byRef).toMatchObject({ responseRef: 'responses/answerline/abc' });
  expect(byRef).not.toHaveProperty('response');
  await offer('answerline#tsk_c', observation('tsk_c', 'COMPLETED', '2026-09-18T12:00:00.000000000Z'));
  expect(await stored()).not.toHaveProperty('responseRef');
});

test('a job key over 1,024 bytes is hashed in the key, kept whole in the item', async () => {
  const longKey = 'k'.repeat(1025);
  expect(resultKey('answerline', longKey)).toBe(`answerline#sha256:${sha256Hex(longKey)}`);
  expect(resultKey('answerline', 'k'.repeat(1024))).toBe(`answerline#${'k'.repeat(1024)}`);
  await offer('answerline#tsk_l', observation('tsk_l', 'COMPLETED', '2026-09-18T10:00:00.000000000Z', longKey));
  expect(await stored(longKey)).toMatchObject({ jobKey: longKey, taskId: 'tsk_l' });
});

/** A result of `bytes` bytes of text that compresses as prose does (words, not one letter repeated). */
function proseResponse(bytes: number): string {
  const words = ['model', 'answer', 'result', 'source', 'the', 'of', 'and', 'context', 'summary', 'value', 'figure', 'report'];
  let text = '';
  for (let i = 0; text.length < bytes; i++) text += `${words[(i * 7 + (i >> 3)) % words.length]}${i % 13 === 0 ? '. ' : ' '}`;
  return JSON.stringify({ result: { answer: text.slice(0, bytes) } });
}

test('a result of 512 bytes or more is kept deflated when that is smaller; a shorter one as text; each new winner replaces the other form', async () => {
  const long = { ...observation('tsk_long', 'COMPLETED', '2026-09-18T10:00:00.000000000Z'), response: proseResponse(900) };
  await offer('answerline#tsk_long', long);
  const deflated = await stored();
  expect(deflated).toMatchObject({ taskId: 'tsk_long', responseEncoding: 'deflate-raw' });
  // The raw deflate stream of the result's UTF-8 bytes, smaller than the result.
  const bytes = deflated!.response as Uint8Array;
  expect(bytes.length).toBeLessThan(Buffer.byteLength(long.response));
  expect(inflateRawSync(bytes).toString('utf8')).toBe(long.response);

  await offer('answerline#tsk_short', observation('tsk_short', 'COMPLETED', '2026-09-18T11:00:00.000000000Z'));
  const text = await stored();
  expect(text).toMatchObject({ response: JSON.stringify({ taskId: 'tsk_short' }) });
  expect(text).not.toHaveProperty('responseEncoding');

  await offer('answerline#tsk_long2', { ...long, taskId: 'tsk_long2', createdAt: '2026-09-18T12:00:00.000000000Z' });
  await offer('answerline#tsk_ref', observation('tsk_ref', 'COMPLETED', '2026-09-18T13:00:00.000000000Z'), 'responses/answerline/def');
  const byRef = await stored();
  expect(byRef).toMatchObject({ responseRef: 'responses/answerline/def' });
  for (const gone of ['response', 'responseEncoding']) expect(byRef).not.toHaveProperty(gone);
});

test('an item written by the previous version (its result as text, whatever its size) is judged and replaced by the same rule', async () => {
  // Exactly what the previous offer wrote for a 900-byte result: `response` as a string, no encoding.
  const oldResponse = proseResponse(900);
  await dynamodb.send(
    new PutItemCommand({
      TableName: table,
      Item: {
        pk: { S: 'answerline#job-1' },
        provider: { S: 'answerline' },
        jobKey: { S: 'job-1' },
        taskId: { S: 'tsk_old' },
        eventKey: { S: 'answerline#tsk_old' },
        status: { S: 'COMPLETED' },
        createdAt: { S: '2026-09-18T10:00:00.000000000Z' },
        winnerOrder: { S: '2|2026-09-18T10:00:00.000000000Z|tsk_old' },
        response: { S: oldResponse },
        updatedAt: { N: '1' },
        version: { N: '1' },
      },
    }),
  );
  expect(await store.winnerOf('answerline', 'job-1')).toEqual({ eventKey: 'answerline#tsk_old', version: 1 });
  // Its own repeat is recognised; a lower result loses against it.
  expect(await offer('answerline#tsk_old', { ...observation('tsk_old', 'COMPLETED', '2026-09-18T10:00:00.000000000Z'), response: oldResponse })).toEqual({
    outcome: 'already_won',
    version: 1,
  });
  expect(await offer('answerline#tsk_early', observation('tsk_early', 'FAILED', '2026-09-18T11:00:00.000000000Z'))).toEqual({ outcome: 'lost' });
  expect(await stored()).toMatchObject({ response: oldResponse, version: 1 });

  const later = { ...observation('tsk_new', 'COMPLETED', '2026-09-18T11:00:00.000000000Z'), response: proseResponse(950) };
  expect(await offer('answerline#tsk_new', later)).toEqual({ outcome: 'won', version: 2 });
  const replaced = await stored();
  expect(replaced).toMatchObject({ taskId: 'tsk_new', responseEncoding: 'deflate-raw', version: 2 });
  expect(inflateRawSync(replaced!.response as Uint8Array).toString('utf8')).toBe(later.response);
});

describe("expiry: a job's result is kept `retentionSeconds` after its last decision, then reads as absent", () => {
  const DAY = 86_400;
  const s3 = new S3Client({ forcePathStyle: true });
  afterAll(() => s3.destroy());

  test('each decision writes its expiry; past it the item is not served though it (and the object it references) is still there, and the job is decided anew at version 1', async () => {
    const names = resourceNames(uniqueName('results-expiry'));
    await createBodyBucket(s3, names);
    const bodies = new S3BodyStore(s3, names.bodyBucket!);
    const expiring = new DynamoDbResultsStore(dynamodb, table, { retentionSeconds: 10 * DAY, now: () => clock });
    const t0 = Date.UTC(2026, 8, 18, 10);
    const large = { ...observation('tsk_a', 'COMPLETED', '2026-09-18T10:00:00.000000000Z'), response: proseResponse(900) };
    const ref = await bodies.put('responses/answerline/large', Buffer.from(large.response));
    expect(await expiring.offer({ provider: 'answerline', eventKey: 'answerline#tsk_a', observation: large, responseRef: ref, now: t0 })).toEqual({
      outcome: 'won',
      version: 1,
    });
    expect(await stored()).toMatchObject({ responseRef: ref, updatedAt: t0, expiresAt: t0 / 1000 + 10 * DAY });

    // A later decision moves the expiry with it.
    const t1 = t0 + 2 * DAY * 1000;
    const later = observation('tsk_b', 'COMPLETED', '2026-09-18T11:00:00.000000000Z');
    expect(await expiring.offer({ provider: 'answerline', eventKey: 'answerline#tsk_b', observation: later, responseRef: ref, now: t1 })).toEqual({
      outcome: 'won',
      version: 2,
    });
    const expiresAt = t1 / 1000 + 10 * DAY;
    expect(await stored()).toMatchObject({ eventKey: 'answerline#tsk_b', expiresAt });

    clock = expiresAt * 1000 - 1;
    expect(await expiring.winnerOf('answerline', 'job-1')).toEqual({ eventKey: 'answerline#tsk_b', version: 2 });
    // At its expiry: absent to a read, though the emulator never deletes it and its object is still there.
    clock = expiresAt * 1000;
    expect(await expiring.winnerOf('answerline', 'job-1')).toBeUndefined();
    expect(await stored()).toMatchObject({ eventKey: 'answerline#tsk_b', version: 2 });
    expect((await bodies.get(ref)).toString()).toBe(large.response);

    // And to an offer: an older FAILED, which would have lost, decides the job anew.
    const failed = observation('tsk_f', 'FAILED', '2026-09-18T09:00:00.000000000Z');
    expect(await expiring.offer({ provider: 'answerline', eventKey: 'answerline#tsk_f', observation: failed, now: clock })).toEqual({
      outcome: 'won',
      version: 1,
    });
    const anew = await stored();
    expect(anew).toMatchObject({ eventKey: 'answerline#tsk_f', status: 'FAILED', version: 1, expiresAt: expiresAt + 10 * DAY });
    expect(anew).not.toHaveProperty('responseRef');
    expect(await expiring.winnerOf('answerline', 'job-1')).toEqual({ eventKey: 'answerline#tsk_f', version: 1 });
  });

  test('an item written before results expired (no expiresAt) reads as expired `retentionSeconds` after its last decision', async () => {
    const t0 = Date.UTC(2026, 8, 18, 10);
    await dynamodb.send(
      new PutItemCommand({
        TableName: table,
        Item: {
          pk: { S: 'answerline#job-1' },
          eventKey: { S: 'answerline#tsk_old' },
          status: { S: 'COMPLETED' },
          winnerOrder: { S: '2|2026-09-18T10:00:00.000000000Z|tsk_old' },
          response: { S: '{}' },
          updatedAt: { N: String(t0) },
          version: { N: '3' },
        },
      }),
    );
    const expiring = new DynamoDbResultsStore(dynamodb, table, { retentionSeconds: 10 * DAY, now: () => clock });
    clock = t0 + 10 * DAY * 1000 - 1;
    expect(await expiring.winnerOf('answerline', 'job-1')).toEqual({ eventKey: 'answerline#tsk_old', version: 3 });
    const lower = observation('tsk_early', 'FAILED', '2026-09-18T11:00:00.000000000Z');
    expect(await expiring.offer({ provider: 'answerline', eventKey: 'answerline#tsk_early', observation: lower, now: clock })).toEqual({ outcome: 'lost' });
    clock += 1;
    expect(await expiring.winnerOf('answerline', 'job-1')).toBeUndefined();
    expect(await expiring.offer({ provider: 'answerline', eventKey: 'answerline#tsk_early', observation: lower, now: clock })).toEqual({
      outcome: 'won',
      version: 1,
    });
    expect(await stored()).toMatchObject({ eventKey: 'answerline#tsk_early', version: 1, expiresAt: Math.floor(clock / 1000) + 10 * DAY });
  });
});
