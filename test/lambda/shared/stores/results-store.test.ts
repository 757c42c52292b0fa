/**
 * The results store's conditional offer against the DynamoDB emulator: a result is stored only
 * when it outranks the job's stored winner (COMPLETED over FAILED, then later created, then the
 * greater task id), a repeat of the winner's own offer is recognised, and every decision counts
 * one version more.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { JobObservation } from '../../../../lambda/shared/providers/adapter';
import { DynamoDbResultsStore, resultKey } from '../../../../lambda/shared/stores/results-store';
import { createTables, resourceNames } from '../../../../local/provision';
import { decodeItem, sha256Hex, uniqueName } from '../../../support/inbox-fixture';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';

const dynamodb = new DynamoDBClient({});
let table: string;
let store: DynamoDbResultsStore;

beforeEach(async () => {
  const names = resourceNames(uniqueName('results-store'));
  await createTables(dynamodb, names);
  table = names.resultsTable;
  store = new DynamoDbResultsStore(dynamodb, table);
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
