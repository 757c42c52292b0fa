/**
 * The submission store's requests against the DynamoDB emulator: one conditional put per
 * record, every later step a single-item write conditioned on the submission still AWAITING, the
 * awaiting index read in bounded queries, earliest due first.
 */
import { createHash } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { NewSubmission, submissionKey } from '../../../../lambda/shared/stores/submission-record';
import { DynamoDbSubmissionStore } from '../../../../lambda/shared/stores/submission-store';
import { DynamoDbInboxStore } from '../../../../lambda/shared/stores/inbox';
import { createTables, resourceNames } from '#twin/testing';
import { uniqueName } from '../../../support/inbox-fixture';
import { SubmissionState } from '../../../../lib/contract';

const dynamodb = new DynamoDBClient({});
let store: DynamoDbSubmissionStore;
let inbox: DynamoDbInboxStore;
const T0 = Date.UTC(2026, 8, 18, 10);

beforeEach(async () => {
  const names = resourceNames(uniqueName('submission-store'));
  await createTables(dynamodb, names);
  store = new DynamoDbSubmissionStore(dynamodb, names.inboxTable);
  inbox = new DynamoDbInboxStore(dynamodb, names.inboxTable);
});
afterAll(() => dynamodb.destroy());

const submission = (taskId: string | undefined, dueAt: number, idempotencyKey?: string): NewSubmission => ({
  provider: 'answerline',
  ...(taskId !== undefined ? { taskId } : {}),
  ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
  submittedAt: T0,
  dueAt,
  expiresAt: T0 / 1000 + 86_400,
});

test('a submission is recorded once, under the ledger prefix, by id or by key', () => {
  expect(submissionKey({ provider: 'answerline', taskId: 'tsk_1' })).toBe('ledger:answerline#tsk_1');
  expect(submissionKey({ provider: 'answerline', idempotencyKey: 'job-1' })).toBe('ledger:answerline#key:job-1');
});

test('record is one conditional put: a second record of the same submission changes nothing', async () => {
  expect(await store.record(submission('tsk_1', T0 + 10))).toBe(true);
  expect(await store.record(submission('tsk_1', T0 + 99))).toBe(false);
  expect(await store.get('ledger:answerline#tsk_1')).toMatchObject({ state: SubmissionState.AWAITING, checks: 0, dueAt: T0 + 10, taskId: 'tsk_1' });
});

test('findDue lists AWAITING submissions due at a time, earliest first and bounded; countAwaiting counts them', async () => {
  for (const [id, due] of [
    ['tsk_c', T0 + 30],
    ['tsk_a', T0 + 10],
    ['tsk_b', T0 + 20],
    ['tsk_later', T0 + 1_000],
  ] as const)
    await store.record(submission(id, due));
  expect((await store.findDue(T0 + 30, 10)).map((due) => due.key)).toEqual(['ledger:answerline#tsk_a', 'ledger:answerline#tsk_b', 'ledger:answerline#tsk_c']);
  expect(await store.findDue(T0 + 30, 2)).toEqual([
    { key: 'ledger:answerline#tsk_a', dueAt: T0 + 10 },
    { key: 'ledger:answerline#tsk_b', dueAt: T0 + 20 },
  ]);
  expect(await store.countAwaiting(T0 + 30, 1000)).toEqual({ awaiting: { count: 4, atLeast: false }, due: { count: 3, atLeast: false } });
});

test('settle, recheck and reschedule write only while the submission is AWAITING; a settled one leaves the index', async () => {
  await store.record(submission('tsk_s', T0));
  expect(await store.recheck('ledger:answerline#tsk_s', T0 + 600, 'pending:PROCESSING', T0)).toBe(true);
  expect(await store.get('ledger:answerline#tsk_s')).toMatchObject({ checks: 1, lastCheck: 'pending:PROCESSING', dueAt: T0 + 600 });
  expect(await store.reschedule('ledger:answerline#tsk_s', T0 + 900)).toBe(true);
  expect(await store.get('ledger:answerline#tsk_s')).toMatchObject({ checks: 1, dueAt: T0 + 900 });

  expect(await store.settle('ledger:answerline#tsk_s', SubmissionState.RECOVERED, 'recovered', T0 + 901)).toBe(true);
  const settled = await store.get('ledger:answerline#tsk_s');
  expect(settled).toMatchObject({ state: SubmissionState.RECOVERED, checks: 2 });
  expect(settled).not.toHaveProperty('dueAt');
  expect(await store.findDue(T0 + 10_000, 10)).toEqual([]);

  expect(await store.settle('ledger:answerline#tsk_s', SubmissionState.UNKNOWN, 'not_found', T0 + 902)).toBe(false);
  expect(await store.recheck('ledger:answerline#tsk_s', T0, 'x', T0)).toBe(false);
  expect(await store.reschedule('ledger:answerline#tsk_s', T0)).toBe(false);
  expect(await store.get('ledger:answerline#tsk_s')).toMatchObject({ state: SubmissionState.RECOVERED });
});

test('findByJobRef finds the delivery rows and the submissions recorded by id with a key, never a key-only one', async () => {
  await store.record(submission('tsk_by_id', T0, 'job-7'));
  await store.record(submission(undefined, T0, 'job-7'));
  await inbox.insert({
    provider: 'answerline',
    eventId: 'tsk_row',
    body: Buffer.from('{}'),
    digest: createHash('sha256').update('{}').digest('hex'),
    receivedAt: T0,
    meta: {},
    expiresAt: T0 / 1000 + 60,
    jobRef: 'job-7',
  });
  const entries = await store.findByJobRef('answerline', 'job-7', 10);
  expect(entries.sort((a, b) => a.key.localeCompare(b.key))).toEqual([
    { key: 'answerline#tsk_row', kind: 'delivery' },
    { key: 'ledger:answerline#tsk_by_id', kind: 'submission' },
  ]);
});
