/**
 * The shipped bundles (`assets/<handler>/index.mjs`, built by `npm run bundle`), run the way
 * Lambda runs them: each in its own process (an execution environment of the local twin, plain
 * Node.js, not jest's module registry), configured only through the environment the construct
 * sets, talking to the emulators and the stand-ins through the SDK bundled inside them.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { DeliveryStatus, Env, MetricName } from '../../lib/contract';
import { bodyObjectKey, responseObjectKey } from '../../lambda/shared/stores/body-store';
import { createBodyBucket } from '#twin/testing';
import { BundleHost } from '../support/bundle-host';
import {
  answerlineBody,
  answerOf,
  EffectsFixture,
  InboxHarness,
  INBOX_NAME,
  keyOf,
  LEASE_MS,
  PROVIDER,
  SecretsFixture,
  sha256Hex,
  taskIdOf,
} from '../support/inbox-fixture';

const secrets = new SecretsFixture();
let h: InboxHarness;
const bundles = new BundleHost();
/** Lines the bundled handlers write to stdout (their logs and EMF documents). */
const stdout = bundles.lines;

beforeAll(async () => {
  await secrets.start();
  h = await InboxHarness.create(secrets, 'bundle', { queue: { visibilityTimeoutSeconds: 1 } });
  Object.assign(process.env, {
    [Env.INBOX_NAME]: INBOX_NAME,
    [Env.INBOX_TABLE]: h.names.inboxTable,
    [Env.RESULTS_TABLE]: h.names.resultsTable,
    [Env.WORK_QUEUE_URL]: h.workQueueUrl,
    [Env.PROVIDERS]: JSON.stringify([h.providerConfig()]),
    [Env.LEASE_SECONDS]: String(LEASE_MS / 1000),
    [Env.MAX_RECEIVE_COUNT]: '2',
  });
});

afterAll(async () => {
  await bundles.stop();
  h?.destroy();
  await secrets.stop();
});

/** A bundle in its own process, calling AWS as its role through the IAM gateway. */
const loadBundle = <T>(handler: 'verifier' | 'processor' | 'reconciler'): T => bundles.handler<T>(handler, h.environmentAs(handler));

const emfTotal = (metric: string) =>
  stdout
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((doc) => '_aws' in doc)
    .reduce((sum, doc) => sum + Number(doc[metric] ?? 0), 0);

test('a signed delivery is accepted by the bundled verifier and processed by the bundled processor', async () => {
  const verifier = loadBundle<(event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>>('verifier');
  const processor = loadBundle<(event: SQSEvent) => Promise<SQSBatchResponse>>('processor');
  const reconciler = loadBundle<() => Promise<{ swept: number; checked: number; overdue: number }>>('reconciler');
  const body = answerlineBody({ idempotencyKey: 'job-bundle-r2' });
  // The bundle's clock is the real one.
  h.clock.set(Date.now());

  expect(answerOf(await verifier(h.signed(body)))).toEqual({ statusCode: 202, result: 'accepted' });
  expect(answerOf(await verifier(h.signed(body)))).toEqual({ statusCode: 200, result: 'duplicate' });
  expect(await h.row(keyOf(body))).toMatchObject({ status: DeliveryStatus.RECEIVED });

  expect(await h.drain(processor)).toEqual({ received: 1, failed: 0 });

  expect(await h.row(keyOf(body))).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: 'winner', attempts: 1 });
  expect(await h.result('job-bundle')).toMatchObject({ taskId: taskIdOf(body), status: 'COMPLETED', version: 1 });
  expect(await reconciler()).toMatchObject({ swept: 0, checked: 0, overdue: 0 });

  // What the bundles wrote to stdout is clean JSON: logs and EMF, no content, no secret.
  expect(emfTotal(MetricName.ACCEPTED)).toBe(1);
  expect(emfTotal(MetricName.DUPLICATE)).toBe(1);
  expect(emfTotal(MetricName.PROCESSED)).toBe(1);
  expect(stdout.filter((line) => JSON.parse(line).Provider === PROVIDER && 'message' in JSON.parse(line)).length).toBeGreaterThan(0);
  for (const needle of h.sensitive) expect(stdout.filter((line) => line.includes(needle))).toEqual([]);
});

test('a body too large for its row goes to S3 through the client the bundles load on its first use, and comes back', async () => {
  const s3 = new S3Client({ forcePathStyle: true });
  const configured = { [Env.BODY_BUCKET]: h.names.bodyBucket, [Env.INLINE_BODY_BYTES]: '1024' };
  try {
    await createBodyBucket(s3, h.names);
    Object.assign(process.env, configured);
    // Fresh environments: their S3 client is not loaded until this body needs it (scripts/bundle-options.ts).
    const verifier = loadBundle<(event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>>('verifier');
    const processor = loadBundle<(event: SQSEvent) => Promise<SQSBatchResponse>>('processor');
    const body = answerlineBody({ idempotencyKey: 'job-bundle-large', response: { result: { answer: 'é🙂'.repeat(1000) } } });
    expect(Buffer.byteLength(body)).toBeGreaterThan(1024);
    h.clock.set(Date.now());

    expect(answerOf(await verifier(h.signed(body)))).toEqual({ statusCode: 202, result: 'accepted' });
    const row = await h.row(keyOf(body));
    expect(row).toMatchObject({ bodyRef: bodyObjectKey(PROVIDER, sha256Hex(body)), status: DeliveryStatus.RECEIVED });
    expect(row).not.toHaveProperty('body');
    const stored = await s3.send(new GetObjectCommand({ Bucket: h.names.bodyBucket, Key: row!.bodyRef as string }));
    expect(await stored.Body!.transformToString('utf8')).toBe(body);

    // The processor reads the body back from S3, and stores the result there too (larger than 1 KiB).
    expect(await h.drain(processor)).toEqual({ received: 1, failed: 0 });
    expect(await h.row(keyOf(body))).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: 'winner' });
    const response = JSON.stringify(JSON.parse(body).response);
    expect(await h.result('job-bundle-large')).toMatchObject({ taskId: taskIdOf(body), responseRef: responseObjectKey(PROVIDER, sha256Hex(response)) });
  } finally {
    for (const name of Object.keys(configured)) delete process.env[name];
    s3.destroy();
  }
});

test('the bundled processor sends each effect to the user’s function, then to the bus its environment names', async () => {
  const effects = await new EffectsFixture().start();
  const configured = { [Env.EFFECT_BUS_NAME]: 'bundle-effects', [Env.EFFECT_FUNCTION_ARN]: '' };
  try {
    effects.eventBridge.createBus('bundle-effects');
    const invoked: unknown[] = [];
    configured[Env.EFFECT_FUNCTION_ARN] = effects.deployFunction((payload) => invoked.push(payload));
    h.useEffectTargets({ eventBusName: 'bundle-effects', processingFunctionArn: configured[Env.EFFECT_FUNCTION_ARN] });
    Object.assign(process.env, configured);
    const verifier = loadBundle<(event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>>('verifier');
    const processor = loadBundle<(event: SQSEvent) => Promise<SQSBatchResponse>>('processor');
    const body = answerlineBody({ idempotencyKey: 'job-bundle-effect' });
    h.clock.set(Date.now());

    expect(answerOf(await verifier(h.signed(body)))).toMatchObject({ statusCode: 202 });
    expect(await h.drain(processor)).toEqual({ received: 1, failed: 0 });

    const events = effects.eventBridge.eventsOn('bundle-effects');
    expect(events).toMatchObject([
      { source: 'cdk-webhook-inbox', detailType: 'JobResultDecided', detail: { inbox: INBOX_NAME, jobKey: 'job-bundle-effect', taskId: taskIdOf(body) } },
    ]);
    expect(invoked).toEqual([{ source: 'cdk-webhook-inbox', 'detail-type': 'JobResultDecided', time: expect.any(String), detail: events[0].detail }]);
    expect(emfTotal(MetricName.EFFECTS_DISPATCHED)).toBe(1);
  } finally {
    for (const name of Object.keys(configured)) delete process.env[name];
    await effects.stop();
  }
});
