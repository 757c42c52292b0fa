/**
 * The authoritative read (docs/providers/standard-webhooks.md): a Standard Webhooks (OpenAI-style) `response.completed`
 * event carries only `data.id`; before anything is exposed the processor GETs the resource from
 * the provider's API (a loopback fake of it) with a Bearer key read from Secrets Manager (the
 * stand-in). Present: the resource travels in the effect. Missing or expired (404/410): the row
 * is settled `unavailable`, nothing is sent, nothing is retried. Anything else: retried.
 */
import { randomUUID } from 'node:crypto';
import { S3Client } from '@aws-sdk/client-s3';
import { AdapterKind, authoritativeReadProblems, Defaults, DeliveryStatus, MetricName, ProviderRuntimeConfig } from '../../lib/contract';
import { resourceObjectKey } from '../../lambda/shared/stores/body-store';
import { S3BodyStore } from '../../lambda/shared/stores/s3-body-store';
import { providersFromEnv } from '../../lambda/shared/runtime/config';
import { createBodyBucket, RecordedEvent } from '#twin/testing';
import {
  answerlineBody,
  answerOf,
  apiGatewayEvent,
  EffectsFixture,
  FakeProviderApi,
  InboxHarness,
  newSigningSecret,
  SecretsFixture,
  sha256Hex,
} from '../support/inbox-fixture';
import { messageId, standardWebhooksHeaders } from '../support/senders';

const PROVIDER = 'openai';
const MAX_RECEIVE_COUNT = 3;

const secrets = new SecretsFixture();
const fx = new EffectsFixture();
const api = new FakeProviderApi();
let h: InboxHarness;
let bus: string;
let sink: ReturnType<InboxHarness['busSink']>['sink'];
let signingSecret: string;
let apiKey: string;
let config: ProviderRuntimeConfig;

beforeAll(async () => {
  await Promise.all([secrets.start(), fx.start(), api.start()]);
});
afterAll(async () => {
  await Promise.all([secrets.stop(), fx.stop(), api.stop()]);
});
beforeEach(async () => {
  h = await InboxHarness.create(secrets, 'authoritative', { queue: { visibilityTimeoutSeconds: 1, maxReceiveCount: MAX_RECEIVE_COUNT } });
  ({ bus, sink } = h.busSink(fx));
  signingSecret = newSigningSecret();
  apiKey = `sk-test-${randomUUID()}`;
  h.markSensitive(apiKey);
  const apiKeySecret = await secrets.create(apiKey);
  config = await h.addProvider(PROVIDER, AdapterKind.STANDARD_WEBHOOKS, signingSecret, {
    authoritativeRead: { urlTemplate: `${api.url}/v1/responses/{id}`, idJsonPath: 'data.id', apiKeySecretId: apiKeySecret.id },
  });
});
afterEach(() => {
  h.expectLogsClean();
  h.destroy();
});

const processor = (overrides: Parameters<InboxHarness['processor']>[0] = {}) =>
  h.processor({ providers: [config], maxReceiveCount: MAX_RECEIVE_COUNT, effects: h.effects(sink), ...overrides });
const events = (): RecordedEvent[] => fx.eventBridge.eventsOn(bus);

/** Delivers an OpenAI-style `response.completed` event naming `responseId`; returns its inbox key. */
async function deliverCompletion(responseId: string): Promise<string> {
  const webhookId = messageId();
  const body = JSON.stringify({
    id: `evt_${randomUUID()}`,
    object: 'event',
    created_at: h.clock.seconds,
    type: 'response.completed',
    data: { id: responseId },
  });
  const event = apiGatewayEvent(body, standardWebhooksHeaders(body, signingSecret, h.clock.seconds, webhookId), { path: `/hooks/${PROVIDER}` });
  expect(answerOf(await h.verifier({ providers: [config] })(event))).toMatchObject({ statusCode: 202 });
  return `${PROVIDER}#${webhookId}`;
}

/** A response resource as the provider keeps it, with content that must never reach a log. */
function resource(id: string, extraBytes = 0): string {
  const text = `output-${randomUUID()}`;
  h.markSensitive(text);
  return JSON.stringify({
    id,
    object: 'response',
    status: 'completed',
    output: [{ type: 'message', content: [{ type: 'output_text', text }] }],
    padding: 'p'.repeat(extraBytes),
  });
}

test('the resource is present: it is fetched with the Bearer key and travels in the effect', async () => {
  const id = `resp_${randomUUID()}`;
  const stored = resource(id);
  api.serve(`/v1/responses/${id}`, stored);
  const key = await deliverCompletion(id);

  expect(await h.drain(processor())).toEqual({ received: 1, failed: 0 });

  expect(api.requestsFor(`/v1/responses/${id}`)).toMatchObject([{ method: 'GET', headers: { authorization: `Bearer ${apiKey}` } }]);
  expect(await h.row(key)).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: 'event' });
  expect(events()).toHaveLength(1);
  expect(events()[0]).toMatchObject({
    detailType: 'WebhookReceived',
    detail: { provider: PROVIDER, eventKey: key, resource: JSON.parse(stored), payload: { type: 'response.completed', data: { id } } },
  });
  expect(h.capture.metric(MetricName.RESOURCE_UNAVAILABLE, PROVIDER)).toBe(0);
});

test('an API key stored as JSON {"apiKey": …}, the format polling reads too, is sent as the key itself', async () => {
  await secrets.rotate(config.authoritativeRead!.apiKeySecretId, JSON.stringify({ apiKey }));
  const id = `resp_${randomUUID()}`;
  api.serve(`/v1/responses/${id}`, resource(id));
  const key = await deliverCompletion(id);

  expect(await h.drain(processor())).toEqual({ received: 1, failed: 0 });

  expect(api.requestsFor(`/v1/responses/${id}`)).toMatchObject([{ headers: { authorization: `Bearer ${apiKey}` } }]);
  expect(await h.row(key)).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: 'event' });
});

test.each([404, 410])('the resource is gone (%i): the row is settled unavailable, nothing is sent, nothing is retried', async (status) => {
  const id = `resp_${randomUUID()}`;
  api.answer(`/v1/responses/${id}`, status);
  const key = await deliverCompletion(id);
  const handler = processor();

  expect(await h.drain(handler)).toEqual({ received: 1, failed: 0 });

  const row = await h.row(key);
  expect(row).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: 'unavailable' });
  // Settled: the sweep passes over it, however long it waits.
  h.clock.advance(Defaults.SWEEP_AFTER_SECONDS * 1000 + 1);
  expect(await h.reconciler()()).toMatchObject({ swept: 0 });
  expect(await h.takeMessages()).toEqual([]);
  expect(events()).toEqual([]);
  expect(h.capture.metric(MetricName.RESOURCE_UNAVAILABLE, PROVIDER)).toBe(1);
  expect(h.capture.metric(MetricName.PROCESSING_FAILED, PROVIDER)).toBe(0);
  expect(h.capture.logs('resource unavailable')).toMatchObject([{ httpStatus: status }]);
  // No retry: the queue and the DLQ are empty, the sweep finds nothing, the provider was asked once.
  h.clock.advance(60 * 60_000);
  expect(await h.reconciler()()).toMatchObject({ swept: 0 });
  expect(await h.takeMessages()).toEqual([]);
  expect(await h.takeMessages(h.deadLetterQueueUrl)).toEqual([]);
  expect(api.requestsFor(`/v1/responses/${id}`)).toHaveLength(1);
});

test.each([503, 429, 401])('the provider answers %i: the row is retried, and the effect sent once the resource is read', async (status) => {
  const id = `resp_${randomUUID()}`;
  const stored = resource(id);
  api.serve(`/v1/responses/${id}`, stored);
  api.answer(`/v1/responses/${id}`, status);
  const key = await deliverCompletion(id);
  const handler = processor();

  expect(await h.pollOnce(handler)).toEqual({ received: 1, failed: 1 });
  expect(await h.row(key)).toMatchObject({ status: DeliveryStatus.RECEIVED, lastError: `AuthoritativeReadError: the provider answered ${status}` });
  await h.pollUntil(handler, async () => (await h.row(key))?.status === DeliveryStatus.PROCESSED);

  expect(await h.row(key)).toMatchObject({ outcome: 'event', attempts: 2 });
  expect(events().map((event) => event.detail.resource)).toEqual([JSON.parse(stored)]);
  expect(api.requestsFor(`/v1/responses/${id}`)).toHaveLength(2);
  expect(h.capture.metric(MetricName.RESOURCE_UNAVAILABLE, PROVIDER)).toBe(0);
});

describe('a job provider with an authoritative read', () => {
  const JOBS = 'tasks';
  let jobs: ProviderRuntimeConfig;

  beforeEach(async () => {
    jobs = await h.addProvider(JOBS, AdapterKind.ANSWERLINE, signingSecret, {
      authoritativeRead: { urlTemplate: `${api.url}/v1/tasks/{id}`, idJsonPath: 'task.id', apiKeySecretId: config.authoritativeRead!.apiKeySecretId },
    });
  });
  const jobProcessor = () => h.processor({ providers: [jobs], maxReceiveCount: MAX_RECEIVE_COUNT, effects: h.effects(sink) });

  /** Delivers a COMPLETED Answerline task; returns its id, job and inbox key. */
  async function deliverTask(): Promise<{ taskId: string; jobKey: string; key: string }> {
    const body = answerlineBody();
    const { id: taskId, idempotencyKey: jobKey } = JSON.parse(body).task;
    const event = apiGatewayEvent(body, standardWebhooksHeaders(body, signingSecret, h.clock.seconds, messageId()), { path: `/hooks/${JOBS}` });
    expect(answerOf(await h.verifier({ providers: [jobs] })(event))).toMatchObject({ statusCode: 202 });
    return { taskId, jobKey, key: `${JOBS}#${taskId}` };
  }

  test('gone at the first read: no result is recorded, no effect, the row settled unavailable', async () => {
    const { taskId, jobKey, key } = await deliverTask();
    api.answer(`/v1/tasks/${taskId}`, 404);

    expect(await h.drain(jobProcessor())).toEqual({ received: 1, failed: 0 });

    expect(await h.row(key)).toMatchObject({ status: DeliveryStatus.PROCESSED, outcome: 'unavailable' });
    expect(await h.result(jobKey, JOBS)).toBeUndefined();
    expect(events()).toEqual([]);
  });

  test('gone on a retry after the winner was decided: the decision stands and its effect goes out without the resource', async () => {
    const { taskId, jobKey, key } = await deliverTask();
    api.serve(`/v1/tasks/${taskId}`, resource(taskId));
    const handler = jobProcessor();
    // The first attempt reads the resource and wins the job, then EventBridge refuses the effect.
    fx.eventBridge.failNextCalls(1);
    expect(await h.pollOnce(handler)).toEqual({ received: 1, failed: 1 });
    expect(await h.result(jobKey, JOBS)).toMatchObject({ taskId, eventKey: key });
    expect(events()).toEqual([]);

    // By the retry the provider has dropped the resource.
    api.answer(`/v1/tasks/${taskId}`, 404);
    await h.pollUntil(handler, async () => (await h.row(key))?.status === DeliveryStatus.PROCESSED);

    expect(await h.row(key)).toMatchObject({ outcome: 'winner', attempts: 2 });
    expect(events()).toHaveLength(1);
    expect(events()[0]).toMatchObject({ detailType: 'JobResultDecided', detail: { eventKey: key, taskId, status: 'COMPLETED', resourceUnavailable: true } });
    expect(events()[0].detail).not.toHaveProperty('resource');
    expect(h.capture.logs('processed')).toMatchObject([{ reconcileResult: 'winner', offer: 'already_won' }]);
    expect(h.capture.metric(MetricName.RESOURCE_UNAVAILABLE, JOBS)).toBe(1);
    expect(api.requestsFor(`/v1/tasks/${taskId}`)).toHaveLength(2);
  });
});

test('a delivery without the id at the configured path is refused at the edge, naming the path: nothing is acknowledged that cannot be read', async () => {
  const requestsBefore = api.requests.length;
  for (const data of [{}, { id: '' }, { id: { nested: true } }]) {
    const webhookId = messageId();
    const body = JSON.stringify({ id: 'evt_1', type: 'response.completed', data });
    const event = apiGatewayEvent(body, standardWebhooksHeaders(body, signingSecret, h.clock.seconds, webhookId), { path: `/hooks/${PROVIDER}` });
    expect(answerOf(await h.verifier({ providers: [config] })(event))).toMatchObject({
      statusCode: 400,
      result: 'malformed',
      detail: expect.stringMatching(/^data\.id /),
    });
  }
  await h.expectNothingAdmitted();
  expect(api.requests).toHaveLength(requestsBefore);
});

test('a large resource travels by reference to the body bucket', async () => {
  const s3 = new S3Client({ forcePathStyle: true });
  try {
    await createBodyBucket(s3, h.names);
    const bodies = new S3BodyStore(s3, h.names.bodyBucket);
    const id = `resp_${randomUUID()}`;
    const stored = resource(id, 300_000);
    api.serve(`/v1/responses/${id}`, stored);
    await deliverCompletion(id);

    expect(
      await h.drain(processor({ bodies: h.bodyStore('processor', { providers: [config] }), effects: h.effects(sink, { bodyBucket: h.names.bodyBucket }) })),
    ).toEqual({ received: 1, failed: 0 });

    const { detail } = events()[0];
    expect(detail).toMatchObject({ resourceRef: resourceObjectKey(PROVIDER, sha256Hex(stored)), bodyBucket: h.names.bodyBucket });
    expect(detail).not.toHaveProperty('resource');
    expect((await bodies.get(detail.resourceRef as string)).toString('utf8')).toBe(stored);
  } finally {
    s3.destroy();
  }
});

describe('configuration', () => {
  const valid = { urlTemplate: 'https://api.openai.com/v1/responses/{id}', idJsonPath: 'data.id', apiKeySecretId: 'openai-api-key' };

  test.each([
    ['a valid https template', valid, []],
    ['a loopback http template (a local twin)', { ...valid, urlTemplate: 'http://127.0.0.1:8080/v1/responses/{id}' }, []],
    ['plain http elsewhere', { ...valid, urlTemplate: 'http://api.openai.com/v1/responses/{id}' }, ['urlTemplate must be an https:// URL']],
    ['no placeholder', { ...valid, urlTemplate: 'https://api.openai.com/v1/responses' }, ['urlTemplate must contain {id} exactly once']],
    ['two placeholders', { ...valid, urlTemplate: 'https://api.openai.com/{id}/{id}' }, ['urlTemplate must contain {id} exactly once']],
    ['not a URL', { ...valid, urlTemplate: 'responses/{id}' }, ['urlTemplate is not a URL']],
    ['no path, no secret', { ...valid, idJsonPath: '', apiKeySecretId: '' }, ['idJsonPath is required', 'apiKeySecretId is required']],
  ])('%s', (_label, settings, problems) => {
    expect(authoritativeReadProblems(settings)).toEqual(problems);
  });

  test('the processor refuses a provider whose authoritative read is unusable at cold start', () => {
    const providers = JSON.stringify([{ ...config, authoritativeRead: { ...valid, urlTemplate: 'http://example.com/{id}' } }]);
    expect(() => providersFromEnv({ WEBHOOK_INBOX_PROVIDERS: providers })).toThrow(
      `WEBHOOK_INBOX_PROVIDERS[0].authoritativeRead: urlTemplate must be an https:// URL`,
    );
  });
});
