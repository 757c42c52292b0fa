/**
 * The ops CLI's commands against the emulators: state seeded through the real handlers (the
 * verifier, the processor, the reconciler), each command called directly and through `run`
 * with a --config file naming the emulators' endpoints, as the local twin writes it.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateTableCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { S3Client } from '@aws-sdk/client-s3';
import { AnswerlineLifecycle, Defaults, DeliveryStatus, PendingIndex, SubmissionState, TableSchema } from '../../lib/contract';
import { createBodyBucket, FakeAnswerlineApi, LambdaInvokeStandIn } from '#twin/testing';
import { shardOf } from '../../lambda/shared/runtime/digest';
import { recordSubmissionInput } from '../../lambda/shared/stores/submission-record';
import { createClients, destroyClients, OpsClients } from '../../cli/clients';
import { inspect } from '../../cli/commands/inspect';
import { parseEventRef } from '../../cli/commands/common';
import { status } from '../../cli/commands/status';
import { LocalOpsConfig } from '../../cli/config';
import { run } from '../../cli/main';
import { answerlineBody, InboxHarness, keyOf, prose, PROVIDER, SecretsFixture, sha256Hex, storeUncheckedRow, taskIdOf } from '../support/inbox-fixture';

/** One receive fails a row for good; the next moves its message to the DLQ (a second later). */
const QUEUE = { visibilityTimeoutSeconds: 1, maxReceiveCount: 1 };
const MINUTE = 60_000;
const SWEEP_AFTER_MS = Defaults.SWEEP_AFTER_SECONDS * 1000;

const secrets = new SecretsFixture();
const lambda = new LambdaInvokeStandIn();
let lambdaEndpoint: string;
let dir: string;
let h: InboxHarness;
let clients: OpsClients;

beforeAll(async () => {
  await secrets.start();
  lambdaEndpoint = await lambda.start();
  dir = mkdtempSync(join(tmpdir(), 'webhook-inbox-cli-'));
});
afterAll(async () => {
  await lambda.stop();
  await secrets.stop();
});
beforeEach(async () => {
  h = await InboxHarness.create(secrets, 'cli', { queue: QUEUE });
  clients = createClients({ lambda: lambdaEndpoint });
});
afterEach(() => {
  destroyClients(clients);
  h.destroy();
});

/** The document the local twin writes for `--config`: the inbox's OpsConfig and the emulators' endpoints. */
function configFile(overrides: Partial<LocalOpsConfig> = {}): string {
  const document = h.localOpsConfig(lambdaEndpoint, overrides);
  const path = join(dir, `${randomUUID()}.json`);
  writeFileSync(path, JSON.stringify(document));
  return path;
}

/** Runs the CLI in-process against this test's inbox (or the --config given). */
async function cli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const args = argv.includes('--config') ? argv : [...argv, '--config', configFile()];
  const code = await run(args, { io: { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) } });
  return { code, stdout, stderr };
}

async function cliJson<T = any>(...argv: string[]): Promise<T> {
  const result = await cli(...argv, '--json');
  expect(result).toMatchObject({ code: 0, stderr: '' });
  return JSON.parse(result.stdout) as T;
}

async function accept(body: string): Promise<string> {
  expect(await h.deliver(body)).toMatchObject({ statusCode: 202 });
  return keyOf(body);
}

/** Delivered `minutesAgo` (by the handlers' clock) and its work message lost: only the pending index knows it. */
async function strand(body: string, minutesAgo: number): Promise<string> {
  const now = h.clock.now();
  h.clock.set(now - minutesAgo * MINUTE);
  const key = await accept(body);
  h.clock.set(now);
  expect(await h.takeMessages()).toEqual([key]);
  return key;
}

/** The CLI run in-process on a machine whose clock is 30 minutes behind the handlers'. */
async function cliBehind(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io = { stdout: (text: string) => (stdout += text), stderr: (text: string) => (stderr += text) };
  const code = await run(argv, { io, now: () => h.clock.now() - 30 * MINUTE });
  return { code, stdout, stderr };
}

/** The reconciler has run after `sweepAfter`: its watermark is where a live inbox's would be. */
async function sweptUpToNow(): Promise<void> {
  h.clock.advance(SWEEP_AFTER_MS);
  expect(await h.reconciler()()).toMatchObject({ swept: 0 });
  expect((await h.row('sweep:pending', 'watermark'))?.sweptBefore).toBe(h.clock.now() - SWEEP_AFTER_MS);
}

/** A row revived without a message: once `sweepAfter` has passed, status counts it owed and the sweep enqueues it, once. */
async function expectSweptOnce(key: string): Promise<void> {
  h.clock.advance(SWEEP_AFTER_MS + 1);
  expect((await status(clients, h.opsConfig(), { now: h.clock.now(), skipScan: true })).stranded).toMatchObject({ count: 1 });
  expect(await h.reconciler()()).toMatchObject({ swept: 1 });
  expect(await h.takeMessages()).toEqual([key]);
  expect(await h.reconciler()()).toMatchObject({ swept: 0 });
  await h.queue.enqueue([key]);
  expect(await h.drain(h.processor())).toEqual({ received: 1, failed: 0 });
  expect(await h.row(key)).toMatchObject({ status: DeliveryStatus.PROCESSED, attempts: 1 });
}

/** The error a store down answers with; its message is not ours, so no row may carry it. */
const storeDown = () => Object.assign(new Error('the store echoed: request content'), { name: 'ServiceUnavailable' });

/** A processor whose results store is down: every row it claims fails. */
const failingProcessor = () =>
  h.processor({
    maxReceiveCount: QUEUE.maxReceiveCount,
    results: {
      offer: async () => {
        throw storeDown();
      },
      winnerOf: async () => {
        throw storeDown();
      },
    },
  });

async function depth(queueUrl: string): Promise<number> {
  const out = await h.sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }));
  return Number(out.Attributes?.ApproximateNumberOfMessages ?? 0);
}

/** Delivers the bodies, fails each for good (row DEAD) and waits until their messages are in the DLQ. */
async function deadLetter(...bodies: string[]): Promise<string[]> {
  const keys = [];
  for (const body of bodies) keys.push(await accept(body));
  const handler = failingProcessor();
  await h.pollUntil(handler, async () => (await depth(h.deadLetterQueueUrl)) >= bodies.length, 8);
  // Only the error's name: its message is not the project's own, and could echo content.
  for (const key of keys) expect(await h.row(key)).toMatchObject({ status: DeliveryStatus.DEAD, lastError: 'ServiceUnavailable' });
  return keys;
}

/** A body with the same task id as `body` but other content: an altered duplicate. */
function altered(body: string): string {
  const parsed = JSON.parse(body);
  return answerlineBody({ id: parsed.task.id, idempotencyKey: parsed.task.idempotencyKey });
}

describe('status', () => {
  test('its counts match the seeded state: backlog, in flight, dead letters, stranded, quarantined, overdue', async () => {
    await deadLetter(answerlineBody());
    const processed = answerlineBody();
    await accept(processed);
    expect(await h.drain(h.processor())).toEqual({ received: 1, failed: 0 });
    // Two altered copies of the processed row, the first one twice.
    const copy = altered(processed);
    expect(await h.deliver(copy)).toMatchObject({ result: 'quarantined' });
    expect(await h.deliver(copy)).toMatchObject({ result: 'quarantined' });
    expect(await h.deliver(altered(processed))).toMatchObject({ result: 'quarantined' });
    await strand(answerlineBody(), 10);
    await strand(answerlineBody(), 2); // pending, but not for 5 minutes yet
    await accept(answerlineBody());
    await accept(answerlineBody());
    // One message received and not deleted: in flight.
    await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: h.workQueueUrl, MaxNumberOfMessages: 1, VisibilityTimeout: 60 }));
    // Submissions: one past its horizon, one not due yet.
    const now = Date.now();
    for (const [taskId, dueAt] of [
      ['tsk_overdue', now - MINUTE],
      ['tsk_fresh', now + 60 * MINUTE],
    ] as const) {
      await h.dynamodb.send(
        new PutItemCommand(
          recordSubmissionInput(h.names.inboxTable, {
            provider: PROVIDER,
            taskId,
            submittedAt: now - 5 * 60 * MINUTE,
            dueAt,
            expiresAt: Math.floor(now / 1000) + 86_400,
          }),
        ),
      );
    }

    const report = await cliJson('status');
    expect(report).toEqual({
      inboxName: 'test-inbox',
      workQueue: { visible: 1, inFlight: 1 },
      deadLetterQueue: { visible: 1, inFlight: 0 },
      stranded: { count: 1, atLeast: false, olderThanSeconds: 300 },
      // 1 dead + 1 processed + 2 copies + 2 stranded + 2 new + 2 submissions
      quarantined: { count: 2, itemsRead: 10 },
      submissions: { awaiting: { count: 2, atLeast: false }, overdue: { count: 1, atLeast: false } },
      // Every pending row, however recent: the 2 stranded and the 2 new.
      flow: { paused: null, breaker: { state: 'CLOSED', openings: 0 }, waiting: { count: 4, atLeast: false } },
    });

    const text = await cli('status');
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^work queue +1 visible, 1 in flight/m);
    expect(text.stdout).toMatch(/^dead-letter queue +1 visible, 0 in flight +remedy: webhook-inbox redrive$/m);
    expect(text.stdout).toMatch(/^stranded rows +1 +pending > 5 min/m);
    expect(text.stdout).toMatch(/^quarantined copies +2 +Scan read 10 items/m);
    expect(text.stdout).toMatch(/^overdue submissions +1 +due for a check now .* of 2 awaiting$/m);
    expect(text.stdout).toMatch(/^processing +running$/m);
    expect(text.stdout).toMatch(/^circuit breaker +CLOSED +opened 0 times$/m);
    expect(text.stdout).toMatch(/^waiting rows +4 +neither processed nor dead/m);

    expect((await cliJson('status', '--skip-scan')).quarantined).toBeNull();
  });

  test('counts only the rows the sweep owes: processed rows keep their pending-index entries and are not counted', async () => {
    const done = [answerlineBody(), answerlineBody(), answerlineBody()];
    const now = h.clock.now();
    h.clock.set(now - 10 * MINUTE);
    for (const body of done) await accept(body);
    expect(await h.drain(h.processor())).toEqual({ received: 3, failed: 0 });
    h.clock.set(now);
    for (const body of done) expect(await h.row(keyOf(body))).toMatchObject({ status: DeliveryStatus.PROCESSED, pendingSince: now - 10 * MINUTE });
    await strand(answerlineBody(), 10);
    expect((await cliJson('status')).stranded).toEqual({ count: 1, atLeast: false, olderThanSeconds: 300 });

    // The sweep enqueues it and moves its watermark past every entry examined: nothing is owed.
    expect(await h.reconciler()()).toMatchObject({ swept: 1 });
    expect((await cliJson('status')).stranded).toEqual({ count: 0, atLeast: false, olderThanSeconds: 300 });
  });

  test('counts are bounded per shard and say so ("≥") when a shard has more', async () => {
    // Three stranded rows in one shard of the pending index.
    const ids: string[] = [];
    for (let i = 0; ids.length < 3; i++) {
      if (shardOf(`${PROVIDER}#tsk_bounded-${i}`, PendingIndex.SHARD_COUNT) === 'p03') ids.push(`tsk_bounded-${i}`);
    }
    for (const id of ids) await strand(answerlineBody({ id }), 10);

    const config = h.opsConfig();
    expect((await status(clients, config, { now: Date.now(), perShardLimit: 2 })).stranded).toEqual({ count: 2, atLeast: true, olderThanSeconds: 300 });
    expect((await status(clients, config, { now: Date.now() })).stranded).toEqual({ count: 3, atLeast: false, olderThanSeconds: 300 });
    expect(await cli('status')).toMatchObject({ code: 0, stdout: expect.stringMatching(/^stranded rows +3 /m) });
  });

  test('an inbox table without the awaiting index (deployed before the ledger) reports submissions as n/a', async () => {
    const { inbox } = TableSchema;
    const legacy = `${h.names.inboxTable}-legacy`;
    await h.dynamodb.send(
      new CreateTableCommand({
        TableName: legacy,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: inbox.partitionKey.name, AttributeType: 'S' },
          { AttributeName: inbox.sortKey.name, AttributeType: 'S' },
          { AttributeName: inbox.pendingIndex.partitionKey.name, AttributeType: 'S' },
          { AttributeName: inbox.pendingIndex.sortKey.name, AttributeType: 'N' },
        ],
        KeySchema: [
          { AttributeName: inbox.partitionKey.name, KeyType: 'HASH' },
          { AttributeName: inbox.sortKey.name, KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: [
          {
            IndexName: inbox.pendingIndex.name,
            KeySchema: [
              { AttributeName: inbox.pendingIndex.partitionKey.name, KeyType: 'HASH' },
              { AttributeName: inbox.pendingIndex.sortKey.name, KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'KEYS_ONLY' },
          },
        ],
      }),
    );
    const report = await status(clients, h.opsConfig({ inboxTable: legacy }), { now: Date.now() });
    expect(report).toMatchObject({ stranded: { count: 0 }, quarantined: { count: 0, itemsRead: 0 }, submissions: null });
    const text = await cli('status', '--config', configFile({ inboxTable: legacy }));
    expect(text.stdout).toMatch(/^overdue submissions +n\/a +the inbox table has no awaiting index/m);
  });
});

describe('redrive', () => {
  test('moves DLQ messages back to the work queue (--limit bounds it); the DEAD rows are then processed', async () => {
    const keys = await deadLetter(answerlineBody(), answerlineBody());
    expect(await h.takeMessages()).toEqual([]);

    expect(await cliJson('redrive', '--limit', '1')).toEqual({ moved: 1, revived: 1, failed: 0 });
    expect(await depth(h.deadLetterQueueUrl)).toBe(1);
    const second = await cli('redrive');
    expect(second).toMatchObject({
      code: 0,
      stdout: 'moved 1 message from the dead-letter queue to the work queue\nrevived 1 DEAD row (RECEIVED again, with a fresh budget of attempts)\n',
    });
    expect(await depth(h.deadLetterQueueUrl)).toBe(0);
    expect(await cli('redrive')).toMatchObject({
      code: 0,
      stdout: 'moved 0 messages from the dead-letter queue to the work queue\nrevived 0 DEAD rows (RECEIVED again, with a fresh budget of attempts)\n',
    });

    expect(await h.drain(h.processor({ maxReceiveCount: QUEUE.maxReceiveCount }))).toEqual({ received: 2, failed: 0 });
    for (const key of keys) expect(await h.row(key)).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: 'winner' });
    expect(await h.resultItems()).toHaveLength(2);
  });

  test('from a machine whose clock is 30 minutes behind, with the send failing: the revived rows are still swept, whatever the clock said', async () => {
    const keys = await deadLetter(answerlineBody());
    await sweptUpToNow();
    const result = await cliBehind('redrive', '--config', configFile({ workQueueUrl: `${h.workQueueUrl}-does-not-exist` }));
    expect(result.code).toBe(1);
    expect(await h.row(keys[0])).toMatchObject({ status: DeliveryStatus.RECEIVED, attempts: 0 });
    expect(await h.takeMessages()).toEqual([]);
    await expectSweptOnce(keys[0]);
  });

  test('SQS refusing a message of the batch (injected by the fault proxy): it stays in the DLQ, counted failed; its revived row is found by the sweep, each row processed once', async () => {
    const keys = await deadLetter(answerlineBody(), answerlineBody(), answerlineBody());
    const faults = await h.faults();
    const fault = faults.refuseEntries({ operations: ['SendMessageBatch'], calls: 1 });
    const { endpoints } = h.localOpsConfig(lambdaEndpoint);

    // A redrive that left a message behind says so: exit code 1.
    const result = await cli('redrive', '--json', '--config', configFile({ endpoints: { ...endpoints, sqs: await h.faultEndpoint() } }));
    expect(result).toMatchObject({ code: 1, stderr: '' });
    expect(JSON.parse(result.stdout)).toEqual({ moved: 2, revived: 3, failed: 1 });
    expect(fault.injected).toBe(1);
    const processor = h.processor({ maxReceiveCount: QUEUE.maxReceiveCount });
    expect(await h.drain(processor)).toEqual({ received: 2, failed: 0 });
    const refused = [];
    for (const key of keys) if ((await h.row(key))?.status !== DeliveryStatus.PROCESSED) refused.push(key);
    expect(refused).toHaveLength(1);
    // Revived before the send: back in the pending index, where the sweep finds it.
    expect(await h.row(refused[0])).toMatchObject({ status: DeliveryStatus.RECEIVED, attempts: 0 });
    h.clock.set(Date.now() + Defaults.SWEEP_AFTER_SECONDS * 1000 + MINUTE);
    expect(await h.reconciler()()).toMatchObject({ swept: 1 });
    expect(await h.drain(processor)).toEqual({ received: 1, failed: 0 });
    for (const key of keys) expect(await h.row(key)).toMatchObject({ status: DeliveryStatus.PROCESSED, attempts: 1 });
  });

  test('an inbox without a DLQ is an operational error', async () => {
    const result = await cli('redrive', '--config', configFile({ deadLetterQueueUrl: undefined }));
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: 'webhook-inbox: inbox test-inbox has no dead-letter queue (its work queue was given without one)\n',
    });
  });
});

describe('replay', () => {
  test('one event: a row whose message was lost is enqueued and processed', async () => {
    const key = await strand(answerlineBody(), 1);
    const result = await cli('replay', '--event', key);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`${key}  RECEIVED  enqueued`);
    expect(result.stdout).toContain('enqueued 1 (0 reset to RECEIVED), skipped 0');
    expect(await h.drain(h.processor())).toEqual({ received: 1, failed: 0 });
    expect(await h.row(key)).toMatchObject({ status: DeliveryStatus.PROCESSED, attempts: 1 });
  });

  test('one event: PROCESSED is reported and skipped; --force processes it again with the same job result', async () => {
    const body = answerlineBody();
    const key = await accept(body);
    expect(await h.drain(h.processor())).toEqual({ received: 1, failed: 0 });
    const jobKey = JSON.parse(body).task.idempotencyKey;
    const decided = await h.result(jobKey);

    const skipped = await cli('replay', '--event', key);
    expect(skipped.code).toBe(0);
    expect(skipped.stdout).toContain(`${key}  PROCESSED  skipped (PROCESSED; use --force)`);
    expect(skipped.stdout).toContain('--force processes them again');
    expect(await h.takeMessages()).toEqual([]);

    expect(await cliJson('replay', '--event', key, '--force')).toEqual({
      rows: [{ key, status: DeliveryStatus.PROCESSED, action: 'reset' }],
      enqueued: 1,
      reset: 1,
      skipped: 0,
      notFound: 0,
    });
    const reset = await h.row(key);
    expect(reset).toMatchObject({ status: DeliveryStatus.RECEIVED, pendingShard: shardOf(key, PendingIndex.SHARD_COUNT) });
    expect(reset!.pendingSince).toBeGreaterThan(Date.now() - MINUTE);

    expect(await h.drain(h.processor())).toEqual({ received: 1, failed: 0 });
    const again = await h.row(key);
    // Replayed with a fresh budget of attempts: this is its first since.
    expect(again).toMatchObject({ status: DeliveryStatus.PROCESSED, attempts: 1 });
    // Completed, it keeps the index entry the replay gave it (the TTL removes it with the row).
    expect(again).toMatchObject({ pendingShard: reset!.pendingShard, pendingSince: reset!.pendingSince });
    // The same observation offered again changes nothing: the job's result stands as decided.
    expect(await h.result(jobKey)).toEqual(decided);
  });

  test('--force from a machine whose clock is 30 minutes behind, with the enqueue failing: the sweep finds the row and enqueues it, and status counts it owed', async () => {
    const key = await accept(answerlineBody());
    expect(await h.drain(h.processor())).toEqual({ received: 1, failed: 0 });
    await sweptUpToNow();
    const result = await cliBehind('replay', '--event', key, '--force', '--config', configFile({ workQueueUrl: `${h.workQueueUrl}-does-not-exist` }));
    expect(result.code).toBe(1);
    expect(await h.row(key)).toMatchObject({ status: DeliveryStatus.RECEIVED, attempts: 0 });
    expect(await h.takeMessages()).toEqual([]);
    await expectSweptOnce(key);
  });

  test('SQS refusing some of the messages (injected by the fault proxy): they are sent again at once, each row enqueued once', async () => {
    const keys = [await strand(answerlineBody(), 3), await strand(answerlineBody(), 3), await strand(answerlineBody(), 3)];
    const faults = await h.faults();
    const fault = faults.refuseEntries({ operations: ['SendMessageBatch'], calls: 1 });
    const { endpoints } = h.localOpsConfig(lambdaEndpoint);
    const config = configFile({ endpoints: { ...endpoints, sqs: await h.faultEndpoint() } });

    const from = new Date(h.clock.now() - 4 * MINUTE).toISOString();
    const to = new Date(h.clock.now()).toISOString();

    const ranged = await cli('replay', '--from', from, '--to', to, '--json', '--config', config);
    expect(ranged).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(ranged.stdout)).toMatchObject({ enqueued: 3 });
    expect(fault.injected).toBe(1);
    expect((await h.takeMessages()).sort()).toEqual([...keys].sort());
  });

  test('selected requests of a polled batch: their rows (`<provider>#<batchId>:<customId>`) are enqueued; an unknown one is exit 1', async () => {
    const now = h.clock.now();
    for (const customId of ['a', 'b', 'c']) {
      const body = Buffer.from(JSON.stringify({ type: 'message_batch.result', batch_id: 'msgbatch_1', custom_id: customId, result: { type: 'succeeded' } }));
      await h.inbox.insert({
        provider: 'batches',
        eventId: `msgbatch_1:${customId}`,
        body,
        digest: sha256Hex(body),
        receivedAt: now,
        meta: {},
        expiresAt: Math.floor(now / 1000) + 3600,
        recovered: true,
      });
    }
    const result = await cli('replay', '--batch', 'batches#msgbatch_1', '--children', 'a,c,zz', '--json');
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ enqueued: 2, notFound: 1 });
    expect((await h.takeMessages()).sort()).toEqual(['batches#msgbatch_1:a', 'batches#msgbatch_1:c']);
    expect(await cli('replay', '--batch', 'batches#msgbatch_1', '--children', 'a')).toMatchObject({ code: 0 });
    expect(await cli('replay', '--batch', 'batches#msgbatch_1')).toMatchObject({ code: 2, stderr: expect.stringContaining('needs --children') });
    expect(await cli('replay', '--batch', 'batches#msgbatch_1', '--children', 'a', '--event', 'x#y')).toMatchObject({ code: 2 });
  });

  test('an unknown event is exit 1; a malformed one is a usage error', async () => {
    expect(await cli('replay', '--event', `${PROVIDER}#tsk_nope`)).toMatchObject({
      code: 1,
      stderr: `webhook-inbox: unknown event ${PROVIDER}#tsk_nope: no row in ${h.names.inboxTable}\n`,
    });
    expect(await cli('replay', '--event', 'tsk_nope')).toMatchObject({ code: 2, stderr: expect.stringContaining('expected <provider>#<eventId>') });
    expect(await cli('replay', '--event', `${PROVIDER}#x`, '--from', '2026-01-01T00:00:00Z')).toMatchObject({ code: 2 });
  });

  test('a time range [from, to): a Scan that says how many items it read; PROCESSED rows only with --force', async () => {
    const t0 = Date.UTC(2026, 8, 18, 10, 0, 0);
    const at = async (ms: number, body: string) => {
      h.clock.set(ms);
      return accept(body);
    };
    const first = await at(t0, answerlineBody());
    expect(await h.drain(h.processor())).toEqual({ received: 1, failed: 0 });
    const second = await at(t0 + MINUTE, answerlineBody());
    const outside = await at(t0 + 2 * MINUTE, answerlineBody());
    expect(await h.takeMessages()).toEqual([second, outside]);
    h.clock.set(Date.now());
    const from = new Date(t0).toISOString();
    const to = new Date(t0 + 2 * MINUTE).toISOString();

    const plain = await cli('replay', '--from', from, '--to', to);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain('Scan read 3 items; 2 delivery rows in the range');
    expect(plain.stdout).toMatch(new RegExp(`^${first} +PROCESSED +skipped \\(PROCESSED; use --force\\)$`, 'm'));
    expect(plain.stdout).toMatch(new RegExp(`^${second} +RECEIVED +enqueued$`, 'm'));
    expect(plain.stdout).toContain('enqueued 1 (0 reset to RECEIVED), skipped 1');
    expect(await h.takeMessages()).toEqual([second]);

    const forced = await cliJson('replay', '--from', from, '--to', to, '--force');
    expect(forced).toMatchObject({ itemsRead: 3, enqueued: 2, reset: 1, skipped: 0 });
    expect(new Set(forced.rows.map((row: { key: string }) => row.key))).toEqual(new Set([first, second]));
    expect((await h.takeMessages()).sort()).toEqual([first, second].sort());
    expect(await h.row(first)).toMatchObject({ status: DeliveryStatus.RECEIVED });
    expect(await h.row(outside)).toMatchObject({ status: DeliveryStatus.RECEIVED });

    expect(await cli('replay', '--from', to, '--to', from)).toMatchObject({ code: 2, stderr: expect.stringContaining('is not before --to') });
    expect(await cli('replay', '--from', '2026-09-18', '--to', to)).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('expected an ISO-8601 instant with a zone'),
    });
  });
});

describe('keys that are not a delivery row’s', () => {
  const FORGED = 'ledger:answerline#tsk_forged';

  /** An item under a submission's key shaped like a delivery row (written bypassing IAM, as only a principal with full table access could). */
  async function forge(status: string, receivedAt: number): Promise<void> {
    const body = answerlineBody({ id: 'tsk_forged', idempotencyKey: 'job-forged' });
    await h.dynamodb.send(
      new PutItemCommand({
        TableName: h.names.inboxTable,
        Item: {
          pk: { S: FORGED },
          sk: { S: 'delivery' },
          body: { B: Buffer.from(body) },
          digest: { B: Buffer.from(sha256Hex(body), 'hex') },
          receivedAt: { N: String(receivedAt) },
          meta: { M: {} },
          status: { S: status },
          attempts: { N: '1' },
          expiresAt: { N: String(Math.floor(receivedAt / 1000) + 3600) },
        },
      }),
    );
  }

  test('inspect and replay --event refuse it as a usage error', async () => {
    await forge(DeliveryStatus.PROCESSED, h.clock.now());
    for (const argv of [
      ['inspect', FORGED],
      ['replay', '--event', FORGED, '--force'],
    ]) {
      expect(await cli(...argv)).toMatchObject({
        code: 2,
        stderr: expect.stringContaining("not a delivery row's key: ledger:answerline is not a provider name"),
      });
    }
    expect(await h.row(FORGED)).toMatchObject({ status: DeliveryStatus.PROCESSED, attempts: 1 });
    expect(await h.takeMessages()).toEqual([]);
  });

  test('replay of a time range reports it refused and leaves it as it is', async () => {
    const t0 = Date.UTC(2026, 8, 18, 10, 0, 0);
    await forge(DeliveryStatus.PROCESSED, t0);
    const report = await cliJson('replay', '--from', new Date(t0).toISOString(), '--to', new Date(t0 + MINUTE).toISOString(), '--force');
    expect(report).toMatchObject({ rows: [{ key: FORGED, status: DeliveryStatus.PROCESSED, action: 'refused' }], enqueued: 0, reset: 0, refused: 1 });
    expect(await h.row(FORGED)).toMatchObject({ status: DeliveryStatus.PROCESSED, attempts: 1 });
    expect(await h.takeMessages()).toEqual([]);
  });

  test('redrive neither revives nor moves a dead-lettered message naming it', async () => {
    await forge(DeliveryStatus.DEAD, h.clock.now());
    await h.sqs.send(new SendMessageCommand({ QueueUrl: h.deadLetterQueueUrl, MessageBody: JSON.stringify({ key: FORGED }) }));
    expect(await cliJson('redrive')).toEqual({ moved: 0, revived: 0, failed: 0, refused: 1 });
    expect(await h.row(FORGED)).toMatchObject({ status: DeliveryStatus.DEAD, attempts: 1 });
    expect(await h.takeMessages()).toEqual([]);
  });
});

describe('inspect', () => {
  test("a job's result past its expiry is absent, as the processor reads it, though the emulator keeps the item", async () => {
    const body = answerlineBody();
    const key = await accept(body);
    expect(await h.drain(h.processor())).toEqual({ received: 1, failed: 0 });
    const jobKey = JSON.parse(body).task.idempotencyKey;
    const expiresAt = (await h.resultItems())[0].expiresAt as number;
    expect(expiresAt).toBe(Math.floor(h.clock.now() / 1000) + Defaults.RETENTION_DAYS * 86_400);
    const config = h.opsConfig({ resultRetentionSeconds: Defaults.RETENTION_DAYS * 86_400 });
    expect((await inspect(clients, config, parseEventRef(key), expiresAt * 1000 - 1)).job).toMatchObject({ jobKey, status: 'COMPLETED' });
    expect((await inspect(clients, config, parseEventRef(key), expiresAt * 1000)).job).toEqual({ jobKey });
    expect(await h.resultItems()).toHaveLength(1);
  });

  test('prints the row sanitized, its quarantined copies and its job result, never the body or a secret', async () => {
    const body = answerlineBody();
    const key = await accept(body);
    expect(await h.drain(h.processor())).toEqual({ received: 1, failed: 0 });
    const copy = altered(body);
    expect(await h.deliver(copy)).toMatchObject({ result: 'quarantined' });
    h.clock.advance(MINUTE);
    expect(await h.deliver(copy)).toMatchObject({ result: 'quarantined' });
    const row = await h.row(key);

    const report = await cliJson('inspect', key);
    expect(report).toEqual({
      row: {
        key,
        provider: PROVIDER,
        eventId: taskIdOf(body),
        status: DeliveryStatus.PROCESSED,
        attempts: 1,
        outcome: 'winner',
        digest: sha256Hex(body),
        receivedAt: new Date(row!.receivedAt as number).toISOString(),
        pendingSince: new Date(row!.pendingSince as number).toISOString(),
        processedAt: new Date(row!.processedAt as number).toISOString(),
        meta: row!.meta,
        body: { where: 'inline', bytes: Buffer.byteLength(body) },
      },
      quarantined: [
        {
          digest: sha256Hex(copy),
          count: 2,
          firstSeen: new Date(h.clock.now() - MINUTE).toISOString(),
          lastSeen: new Date(h.clock.now()).toISOString(),
        },
      ],
      job: { jobKey: JSON.parse(body).task.idempotencyKey, status: 'COMPLETED', taskId: taskIdOf(body), decidedByThisDelivery: true },
    });
    expect(Object.keys(report.row.meta)).toEqual(expect.arrayContaining(['webhook-id', 'webhook-timestamp']));

    const text = await cli('inspect', key);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^status +PROCESSED$/m);
    expect(text.stdout).toMatch(new RegExp(`^body +${Buffer.byteLength(body)} bytes, inline in the row$`, 'm'));
    expect(text.stdout).toMatch(/^job +.*: COMPLETED, task tsk_.* \(decided by this delivery\)$/m);
    expect(text.stdout).toContain(`quarantined copies: 1\n  DIGEST`);
    expect(text.stdout).toContain(sha256Hex(copy));

    // Neither output carries a body, a signature, the signing secret or any content of the bodies.
    for (const output of [text.stdout, JSON.stringify(report)]) {
      for (const needle of h.sensitive) expect(output).not.toContain(needle);
      for (const content of [body, copy]) expect(output).not.toContain(JSON.parse(content).response.result.answer);
      expect(output).not.toContain(h.secret.value);
    }
    expect(h.sensitive.size).toBeGreaterThanOrEqual(5);
  });

  test('a body in S3: its size and reference, and the job read from the stored object', async () => {
    const s3 = new S3Client({ forcePathStyle: true });
    try {
      await createBodyBucket(s3, h.names);
      const body = answerlineBody({ response: { result: { answer: `answer-${randomUUID()} ${'x'.repeat(4096)}` } } });
      expect(await h.deliver(body, h.verifier({ bodies: h.bodyStore('verifier'), inlineBodyBytes: 1024 }))).toMatchObject({ statusCode: 202 });
      const key = keyOf(body);
      const config = h.opsConfig({ bodyBucket: h.names.bodyBucket });

      const pending = await inspect(clients, config, parseEventRef(key));
      expect(pending.row).toMatchObject({
        status: DeliveryStatus.RECEIVED,
        body: { where: 's3', bytes: Buffer.byteLength(body), reference: `bodies/${PROVIDER}/${sha256Hex(body)}` },
      });
      expect(pending.row.pendingSince).toBeDefined();
      expect(pending.job).toEqual({ jobKey: JSON.parse(body).task.idempotencyKey });

      expect(await h.drain(h.processor({ bodies: h.bodyStore('processor'), inlineBodyBytes: 1024 }))).toEqual({ received: 1, failed: 0 });
      const text = await cli('inspect', key, '--config', configFile({ bodyBucket: h.names.bodyBucket }));
      expect(text.stdout).toContain(`${Buffer.byteLength(body)} bytes, in S3 (bodies/${PROVIDER}/${sha256Hex(body)})`);
      expect(text.stdout).toMatch(/^job +.*: COMPLETED/m);
      expect(text.stdout).not.toContain('x'.repeat(64));
    } finally {
      s3.destroy();
    }
  });

  test('a body in an item of its own: its size, and the job read from that item', async () => {
    const body = answerlineBody({ response: { result: { answer: prose(16 * 1024) } } });
    const key = await accept(body);
    expect((await inspect(clients, h.opsConfig(), parseEventRef(key))).row).toMatchObject({ body: { where: 'item', bytes: Buffer.byteLength(body) } });
    expect(await h.drain(h.processor())).toEqual({ received: 1, failed: 0 });
    const text = await cli('inspect', key);
    expect(text.stdout).toMatch(new RegExp(`^body +${Buffer.byteLength(body)} bytes, in an item of its own beside the row$`, 'm'));
    expect(text.stdout).toMatch(/^job +.*: COMPLETED, task tsk_.* \(decided by this delivery\)$/m);
    expect(text.stdout).not.toContain(prose(64));
  });

  test('a dead row shows its error; an unknown event is exit 1 naming it', async () => {
    const [key] = await deadLetter(answerlineBody());
    expect(await cli('inspect', key)).toMatchObject({ code: 0, stdout: expect.stringMatching(/^lastError +ServiceUnavailable$/m) });
    // A body the adapter cannot read: the job is not known, and the note names the field only.
    const poison = answerlineBody({ createdAt: 'not a date' });
    const report = await inspect(clients, h.opsConfig(), parseEventRef(await storeUncheckedRow(h, poison)));
    expect(report.job).toBeUndefined();
    expect(report.jobNote).toBe('the body cannot be interpreted (MalformedDeliveryError: task.createdAt: is not an ISO-8601 date and time with a zone)');
    const unknown = await cli('inspect', `${PROVIDER}#tsk_nope`);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(`unknown event ${PROVIDER}#tsk_nope: no row in ${h.names.inboxTable}`);
  });
});

describe('reconcile', () => {
  test('invokes the reconciler (RequestResponse) and prints its report', async () => {
    const config = h.opsConfig();
    lambda.deploy(config.reconcilerFunctionName, () => h.reconciler()());
    const key = await strand(answerlineBody(), 10);

    const result = await cli('reconcile');
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^swept +1$/m);
    expect(lambda.invocations.at(-1)).toMatchObject({ functionName: config.reconcilerFunctionName, invocationType: 'RequestResponse' });
    expect(await h.takeMessages()).toEqual([key]);
    expect(await cliJson('reconcile')).toMatchObject({ swept: 0 });
  });

  test('a function error is exit 1 with its type and message', async () => {
    const config = h.opsConfig({ reconcilerFunctionName: `${h.names.inboxTable}-broken-reconciler` });
    lambda.deploy(config.reconcilerFunctionName, () => {
      throw new TypeError('inbox table unreachable');
    });
    const result = await cli('reconcile', '--config', configFile(config));
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: `webhook-inbox: the reconciler ${config.reconcilerFunctionName} failed (Unhandled): TypeError: inbox table unreachable\n`,
    });
    const missing = await cli('reconcile', '--config', configFile({ reconcilerFunctionName: 'no-such-function' }));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('ResourceNotFoundException');
  });
});

describe('pause and resume', () => {
  /** The CLI in-process on the handlers' clock, its waits taken on that clock. */
  async function cliOnClock(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    const io = { stdout: (text: string) => (stdout += text), stderr: (text: string) => (stderr += text) };
    const code = await run([...argv, '--config', configFile()], { io, now: h.clock.now, sleep: async (ms) => h.clock.advance(ms) });
    return { code, stdout, stderr };
  }

  test('pause holds every row without spending an attempt; status says since when and how many wait; resume processes each once', async () => {
    const config = h.opsConfig();
    lambda.deploy(config.reconcilerFunctionName, (event) => h.reconciler()(event));
    const pausedAt = h.clock.now();
    const paused = await cliOnClock('pause', '--json');
    expect(paused.code).toBe(0);
    expect(JSON.parse(paused.stdout)).toMatchObject({ paused: { since: new Date(pausedAt).toISOString(), by: 'webhook-inbox pause' } });

    const keys = [await accept(answerlineBody()), await accept(answerlineBody())];
    expect(await h.drain(h.processor())).toEqual({ received: 2, failed: 0 });
    for (const key of keys) expect(await h.row(key)).toMatchObject({ status: DeliveryStatus.RECEIVED });

    const status = await cliOnClock('status');
    expect(status.stdout).toMatch(
      new RegExp(
        `^processing +PAUSED since ${new Date(pausedAt).toISOString().replace(/\./g, '\\.')} +by webhook-inbox pause; remedy: webhook-inbox resume$`,
        'm',
      ),
    );
    expect(status.stdout).toMatch(/^waiting rows +2 /m);

    const resumed = await cliOnClock('resume', '--json');
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ paused: null, breaker: { state: 'CLOSED' }, reconciler: { swept: 2 } });
    expect(lambda.invocations.at(-1)).toMatchObject({ functionName: config.reconcilerFunctionName });
    expect(await h.drain(h.processor())).toEqual({ received: 2, failed: 0 });
    for (const key of keys) expect(await h.row(key)).toMatchObject({ status: DeliveryStatus.PROCESSED, attempts: 1 });
    expect((await cliJson('status')).flow.waiting).toEqual({ count: 0, atLeast: false });
  });
});

describe('reconcile --until-settled', () => {
  let api: FakeAnswerlineApi;
  beforeEach(async () => {
    api = new FakeAnswerlineApi();
    await api.start();
    const polling = await h.pollingConfig(api.apiKey, api.taskUrlTemplate, { timeoutMs: 5_000 });
    lambda.deploy(h.opsConfig().reconcilerFunctionName, (event) => h.reconciler({ ledger: h.ledger({ polling: [polling] }) })(event));
  });
  afterEach(() => api.stop());

  /** Tasks the app recorded past Answerline's horizon (an outage), in the fake API with these statuses. */
  async function recordedDuringOutage(...statuses: string[]): Promise<string[]> {
    const ledger = h.submissionLedger();
    const submittedAt = Date.now() - AnswerlineLifecycle.HORIZON_SECONDS * 1000 - MINUTE;
    return Promise.all(
      statuses.map(async (status) => {
        const task = api.addTask({ status });
        h.markSensitive(`answer-${task.id}`);
        await ledger.recordSubmission({ provider: PROVIDER, taskId: task.id, idempotencyKey: task.idempotencyKey!, submittedAt });
        return task.id;
      }),
    );
  }

  /** The CLI in-process; `between` runs where it would wait between two runs. */
  async function untilSettled(between: () => void, ...argv: string[]) {
    let stdout = '';
    let stderr = '';
    const waits: number[] = [];
    const sleep = async (ms: number) => {
      waits.push(ms);
      between();
    };
    const args = ['reconcile', '--until-settled', ...argv, '--config', configFile()];
    const code = await run(args, { io: { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) }, sleep });
    return { code, stdout, stderr, waits };
  }

  test('runs the reconciler until the ledger has nothing due and the provider nothing queued or processing: exit 0', async () => {
    const [running, queued] = await recordedDuringOutage('PROCESSING', 'QUEUED');
    // A task the app never recorded still counts at the provider.
    const unrecorded = api.addTask({ status: 'QUEUED' });
    let runs = 0;
    const result = await untilSettled(() => {
      runs += 1;
      if (runs === 1) {
        api.setStatus(running, 'COMPLETED');
        api.setStatus(queued, 'FAILED');
      }
      if (runs === 2) api.setStatus(unrecorded.id, 'COMPLETED');
    });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout.split('\n')).toEqual([
      expect.stringMatching(/^run 1 \(\d+ s\): 2 submissions unsettled; answerline: 2 queued, 1 processing$/),
      expect.stringMatching(/^run 2 \(\d+ s\): 0 submissions unsettled; answerline: 1 queued, 0 processing$/),
      expect.stringMatching(/^run 3 \(\d+ s\): 0 submissions unsettled; answerline: 0 queued, 0 processing$/),
      'settled after 3 runs',
      '',
    ]);
    expect(result.waits).toEqual([5_000, 5_000]);
    expect(await h.submission(`ledger:${PROVIDER}#${running}`)).toMatchObject({ state: SubmissionState.RECOVERED });
    expect(await h.submission(`ledger:${PROVIDER}#${queued}`)).toMatchObject({ state: SubmissionState.RECOVERED });
    // Each run invoked the reconciler as a settlement run.
    expect(lambda.invocations.at(-1)!.payload).toEqual({ source: 'webhook-inbox.cli', 'detail-type': 'Reconcile until settled' });
  });

  test('a task still processing at the timeout: exit 1, saying what is left; --json prints the report, progress on stderr', async () => {
    const [stuck] = await recordedDuringOutage('PROCESSING');
    const result = await untilSettled(() => {}, '--timeout', '1');
    expect(result).toMatchObject({ code: 1, stderr: '', waits: [] });
    expect(result.stdout).toMatch(/not settled after \d+ s \(1 run\): 1 submission unsettled; answerline: 0 queued, 1 processing\n$/);
    expect(await h.submission(`ledger:${PROVIDER}#${stuck}`)).toMatchObject({ state: SubmissionState.AWAITING, lastCheck: 'pending:PROCESSING' });

    const json = await untilSettled(() => {}, '--timeout', '1', '--json');
    expect(json.code).toBe(1);
    expect(json.stderr).toMatch(/^webhook-inbox: run 1 \(\d+ s\): 1 submission unsettled; answerline: 0 queued, 1 processing\n$/);
    expect(JSON.parse(json.stdout)).toMatchObject({
      settled: false,
      runs: 1,
      left: { unsettled: { count: 1, atLeast: false }, providers: [{ provider: PROVIDER, queuedTasks: 0, processingTasks: 1 }] },
    });
  });

  test('a provider whose status cannot be read is not settled; --timeout without --until-settled is a usage error', async () => {
    api.inject(500);
    const result = await untilSettled(() => {}, '--timeout', '1');
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/0 submissions unsettled; answerline: status unknown \(http_500\)/);
    expect(await cli('reconcile', '--timeout', '5')).toMatchObject({ code: 2, stderr: expect.stringContaining('--timeout goes with --until-settled') });
  });
});

describe('quarantine', () => {
  test('lists the quarantined copies with counts and first/last seen; a Scan that says what it read', async () => {
    const one = answerlineBody();
    const two = answerlineBody();
    await accept(one);
    await accept(two);
    const copyOne = altered(one);
    const copyTwo = altered(two);
    const start = h.clock.now();
    expect(await h.deliver(copyOne)).toMatchObject({ result: 'quarantined' });
    h.clock.advance(MINUTE);
    expect(await h.deliver(copyTwo)).toMatchObject({ result: 'quarantined' });
    h.clock.advance(MINUTE);
    expect(await h.deliver(copyOne)).toMatchObject({ result: 'quarantined' });

    expect(await cliJson('quarantine')).toEqual({
      itemsRead: 4,
      copies: [
        {
          key: keyOf(one),
          digest: sha256Hex(copyOne),
          count: 2,
          firstSeen: new Date(start).toISOString(),
          lastSeen: new Date(start + 2 * MINUTE).toISOString(),
        },
        {
          key: keyOf(two),
          digest: sha256Hex(copyTwo),
          count: 1,
          firstSeen: new Date(start + MINUTE).toISOString(),
          lastSeen: new Date(start + MINUTE).toISOString(),
        },
      ],
    });
    const text = await cli('quarantine');
    expect(text.stdout).toMatch(/^Scan read 4 items; 2 quarantined copies$/m);
    expect(text.stdout).toMatch(new RegExp(`^${keyOf(one)} +${sha256Hex(copyOne)} +2 `, 'm'));
    for (const needle of h.sensitive) expect(text.stdout).not.toContain(needle);
  });

  test('none: says so', async () => {
    await accept(answerlineBody());
    expect(await cli('quarantine')).toEqual({ code: 0, stdout: 'Scan read 1 item; 0 quarantined copies\n', stderr: '' });
  });
});

describe('quarantine --rejected', () => {
  const DAY = 24 * 60 * MINUTE;
  /** A delivery signed with a secret the inbox does not hold, `minutesAgo` by the handlers' clock. */
  async function forgeAt(minutesAgo: number): Promise<string> {
    const now = h.clock.now();
    h.clock.set(now - minutesAgo * MINUTE);
    const body = answerlineBody();
    expect(await h.deliver(body, undefined, { secret: `whsec_${Buffer.alloc(32, 9).toString('base64')}` })).toMatchObject({ result: 'bad_signature' });
    h.clock.set(now);
    return body;
  }

  test('lists the records of refused requests since an instant, oldest first, without bodies or header values; expired ones are left out', async () => {
    await forgeAt((8 * DAY) / MINUTE); // expired: records are kept 7 days
    const old = await forgeAt((2 * DAY) / MINUTE);
    const recent = await forgeAt(5);
    await accept(answerlineBody());

    const lastDay = await cliJson('quarantine', '--rejected');
    expect(lastDay.records.map((record: { digest: string }) => record.digest)).toEqual([sha256Hex(recent)]);
    const since = new Date(h.clock.now() - 9 * DAY).toISOString();
    const all = await cliJson('quarantine', '--rejected', '--since', since, '--provider', PROVIDER);
    expect(all).toMatchObject({ providers: [PROVIDER], since, truncated: false });
    expect(all.records).toEqual([
      expect.objectContaining({ provider: PROVIDER, reason: 'bad_signature', httpStatus: 400, digest: sha256Hex(old), bodyBytes: Buffer.byteLength(old) }),
      expect.objectContaining({
        provider: PROVIDER,
        reason: 'bad_signature',
        httpStatus: 400,
        digest: sha256Hex(recent),
        receivedAt: new Date(h.clock.now() - 5 * MINUTE).toISOString(),
      }),
    ]);
    expect(all.records[0].headerNames).toContain('webhook-signature');
    expect(all.records[0].sourceHash).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect((await cliJson('quarantine', '--rejected', '--since', since, '--limit', '1')).truncated).toBe(true);

    const text = await cli('quarantine', '--rejected', '--since', since);
    expect(text.stdout).toMatch(new RegExp(`^2 rejection records of ${PROVIDER} since ${since.replace(/[.]/g, '\\.')}$`, 'm'));
    expect(text.stdout).toMatch(
      new RegExp(`^\\S+ +${PROVIDER} +bad_signature +400 +hmac-sha256:[0-9a-f]{64} +${Buffer.byteLength(old)} +${sha256Hex(old)} +accept,`, 'm'),
    );
    for (const needle of h.sensitive) expect(text.stdout + JSON.stringify(all)).not.toContain(needle);
  });

  test('an unknown provider, or a filter without --rejected, is a usage error', async () => {
    expect(await cli('quarantine', '--rejected', '--provider', 'nobody')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--provider nobody: this inbox serves answerline'),
    });
    expect(await cli('quarantine', '--since', '2026-09-18T10:00:00Z')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--since lists rejection records: add --rejected'),
    });
    expect(await cli('quarantine', '--rejected', '--since', 'yesterday')).toMatchObject({ code: 2 });
  });
});
