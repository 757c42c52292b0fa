/**
 * The archive, written by the processor against the emulators (S3 on fauxqs). The rules, stated
 * here on their own:
 * - each processed delivery is one JSON line under `deliveries/source=<provider>/day=<UTC day of
 *   receipt>/`, holding its exact bytes (base64), its SHA-256, its event id and type, when it was
 *   received, `valid` and `new`, and the processor's result; one object per batch, not per delivery;
 * - a batch whose archive write fails is not processed: its rows stay for the retry, counted
 *   `ArchiveFailed`, and nothing is lost.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { ARCHIVE_COLUMNS, DeliveryStatus, MetricName } from '../../lib/contract';
import { S3BodyStore } from '../../lambda/shared/stores/s3-body-store';
import { run } from '../../cli/main';
import { answerlineBody, InboxHarness, keyOf, PROVIDER, SecretsFixture, taskIdOf } from '../support/inbox-fixture';

const secrets = new SecretsFixture();
const s3 = new S3Client({ forcePathStyle: true });
let h: InboxHarness;
let bucket: string;

beforeAll(() => secrets.start());
afterAll(async () => {
  s3.destroy();
  await secrets.stop();
});
beforeEach(async () => {
  h = await InboxHarness.create(secrets, 'archive');
  bucket = `archive-${randomUUID().slice(0, 8)}`;
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
});
afterEach(() => {
  h.expectLogsClean();
  h.destroy();
});

async function objects(): Promise<{ key: string; lines: Record<string, any>[] }[]> {
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'deliveries/' }));
  return Promise.all(
    (listed.Contents ?? []).map(async ({ Key }) => {
      const text = await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key }))).Body!.transformToString();
      return {
        key: Key!,
        lines: text
          .trimEnd()
          .split('\n')
          .map((line) => JSON.parse(line)),
      };
    }),
  );
}

test('a batch of processed deliveries is one object of JSON lines: exact bytes, digest, id, type, times, results', async () => {
  const bodies = [answerlineBody(), answerlineBody({ status: 'FAILED' }), answerlineBody()];
  for (const body of bodies) expect(await h.deliver(body)).toMatchObject({ statusCode: 202 });
  expect(await h.drain(h.processor({ archive: new S3BodyStore(s3, bucket) }))).toEqual({ received: 3, failed: 0 });

  const archived = await objects();
  const day = new Date(h.clock.now()).toISOString().slice(0, 10);
  expect(archived.map((object) => object.key.startsWith(`deliveries/source=${PROVIDER}/day=${day}/`))).toEqual(archived.map(() => true));
  const lines = archived.flatMap((object) => object.lines);
  expect(archived.length).toBeLessThan(lines.length);
  expect(lines.map((line) => line.eventId).sort()).toEqual(bodies.map(taskIdOf).sort());
  for (const body of bodies) {
    const line = lines.find((each) => each.eventId === taskIdOf(body))!;
    expect(Buffer.from(line.bodyBase64, 'base64').equals(Buffer.from(body))).toBe(true);
    expect(line).toMatchObject({
      provider: PROVIDER,
      eventType: JSON.parse(body).task.status,
      digest: createHash('sha256').update(body).digest('hex'),
      receivedAt: new Date(h.clock.now()).toISOString(),
      signatureResult: 'valid',
      dedupeResult: 'new',
    });
    expect(JSON.stringify(line.headers)).not.toMatch(/signature/i);
  }
  expect(h.capture.metric(MetricName.ARCHIVED, PROVIDER)).toBe(3);
  // Athena reads every field a line holds: each is a column of the Glue table.
  const columns = ARCHIVE_COLUMNS.map((column) => column.name as string);
  for (const line of lines) expect(Object.keys(line).filter((field) => !columns.includes(field))).toEqual([]);
});

test('an archive write that fails leaves the rows unprocessed for the retry, counted, and nothing is lost', async () => {
  const body = answerlineBody();
  await h.deliver(body);
  const missing = new S3BodyStore(s3, `missing-${randomUUID().slice(0, 8)}`);
  expect(await h.drain(h.processor({ archive: missing, maxReceiveCount: 5 }))).toMatchObject({ failed: 1 });
  expect(h.capture.metric(MetricName.ARCHIVE_FAILED, PROVIDER)).toBe(1);
  expect(await h.row(keyOf(body))).toMatchObject({ status: DeliveryStatus.RECEIVED });
});

describe('webhook-inbox search and export', () => {
  async function cli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const path = join(mkdtempSync(join(tmpdir(), 'archive-cli-')), 'config.json');
    writeFileSync(path, JSON.stringify(h.localOpsConfig('http://127.0.0.1:9', { archiveBucket: bucket })));
    let stdout = '';
    let stderr = '';
    const code = await run([...argv, '--config', path], { io: { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) } });
    return { code, stdout, stderr };
  }

  test('list a window by provider and type without bodies, and export it as JSON lines with the exact bytes, each delivery once', async () => {
    const completed = answerlineBody();
    const failed = answerlineBody({ status: 'FAILED' });
    for (const body of [completed, failed]) await h.deliver(body);
    await h.drain(h.processor({ archive: new S3BodyStore(s3, bucket) }));
    // A retried batch archives its deliveries again, under another object: search and export print each once.
    const [first] = await objects();
    const copy = first.lines.map((line) => JSON.stringify(line)).join('\n');
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: first.key.replace(/\.jsonl$/, '-retried.jsonl'), Body: `${copy}\n` }));
    const at = h.clock.now();
    const window = ['--from', new Date(at - 60_000).toISOString(), '--to', new Date(at + 60_000).toISOString()];

    const search = await cli('search', ...window, '--provider', PROVIDER, '--type', 'FAILED', '--json');
    expect(search.code).toBe(0);
    const entries = JSON.parse(search.stdout);
    expect(entries.map((entry: any) => [entry.eventId, entry.eventType, entry.bodyBytes])).toEqual([[taskIdOf(failed), 'FAILED', Buffer.byteLength(failed)]]);
    expect(entries[0]).not.toHaveProperty('bodyBase64');

    const exported = await cli('export', ...window);
    expect(exported.code).toBe(0);
    const lines = exported.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.map((line) => Buffer.from(line.bodyBase64, 'base64').toString()).sort()).toEqual([completed, failed].sort());

    const outside = await cli('search', '--from', '2020-01-01T00:00:00Z', '--to', '2020-03-01T00:00:00Z');
    expect(outside).toMatchObject({ code: 2, stderr: expect.stringContaining('at most 31') });
  });
});
