/**
 * The shipped bundles (`assets/<handler>/index.js`, built by `npm run bundle`), run the way
 * Lambda runs them: each in its own process (an execution environment of the local twin, plain
 * Node.js, not jest's module registry), configured only through the environment the construct
 * sets, talking to the emulators and the stand-ins through the SDK bundled inside them.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { Env, MetricName } from '../../lib/contract';
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
  expect(await h.row(keyOf(body))).toMatchObject({ status: 'RECEIVED' });

  expect(await h.drain(processor)).toEqual({ received: 1, failed: 0 });

  expect(await h.row(keyOf(body))).toMatchObject({ status: 'PROCESSED', outcome: 'winner', attempts: 1 });
  expect(await h.result('job-bundle')).toMatchObject({ taskId: taskIdOf(body), status: 'COMPLETED', version: 1 });
  expect(await reconciler()).toMatchObject({ swept: 0, checked: 0, overdue: 0 });

  // What the bundles wrote to stdout is clean JSON: logs and EMF, no content, no secret.
  expect(emfTotal(MetricName.ACCEPTED)).toBe(1);
  expect(emfTotal(MetricName.DUPLICATE)).toBe(1);
  expect(emfTotal(MetricName.PROCESSED)).toBe(1);
  expect(stdout.filter((line) => JSON.parse(line).provider === PROVIDER).length).toBeGreaterThan(0);
  for (const needle of h.sensitive) expect(stdout.filter((line) => line.includes(needle))).toEqual([]);
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
