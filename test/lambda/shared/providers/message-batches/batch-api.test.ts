/**
 * The message-batches provider: its route refuses every request (it sends no webhooks), its
 * stored bodies are admitted under the documented ids, and its API client reads the fake batch
 * API over real HTTP, refusing what it must not feed.
 */
import { randomUUID } from 'node:crypto';
import { AdapterKind, providerRuntimeConfig } from '../../../../../lib/contract';
import { ApiKeySource } from '../../../../../lambda/shared/providers/api-key';
import { messageBatchesAdapter } from '../../../../../lambda/shared/providers/message-batches/adapter';
import { MessageBatchesApi } from '../../../../../lambda/shared/providers/message-batches/batch-api';
import { SecretCache } from '../../../../../lambda/shared/signatures/secrets';
import { FakeMessageBatchesApi } from '#twin/testing';
import { SecretsFixture } from '../../../../support/inbox-fixture';

const adapter = messageBatchesAdapter(
  providerRuntimeConfig({ name: 'batches', adapter: AdapterKind.MESSAGE_BATCHES, secretId: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:s' }),
);
const body = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8');

describe('the adapter', () => {
  test('refuses every request to its route, whatever it carries', () => {
    const key = { stage: 'AWSCURRENT', bytes: Buffer.from('k') };
    expect(adapter.verify({ authorization: 'Bearer x' }, body({ type: 'message_batch.result' }), [key], 0)).toMatchObject({
      ok: false,
      reason: 'bad_signature',
    });
  });

  test('a request result is keyed `<batchId>:<customId>` (escaped), a summary `<batchId>:~batch`; anything else is malformed, naming the field', () => {
    const child = { type: 'message_batch.result', batch_id: 'msgbatch/1', custom_id: 'req-1', result: { type: 'errored' } };
    expect(adapter.admit({}, body(child))).toEqual({ kind: 'event', eventId: 'msgbatch%2F1:req-1' });
    expect(adapter.admit({}, body({ type: 'message_batch.settled', batch_id: 'msgbatch/1', outcome: 'partial' }))).toEqual({
      kind: 'event',
      eventId: 'msgbatch%2F1:~batch',
    });
    expect(adapter.admit({}, body({ ...child, custom_id: 'has space' }))).toMatchObject({ kind: 'malformed', detail: expect.stringContaining('custom_id') });
    expect(adapter.admit({}, body({ ...child, result: { type: 'pending' } }))).toMatchObject({
      kind: 'malformed',
      detail: expect.stringContaining('result.type'),
    });
    expect(adapter.admit({}, body({ ...child, batch_id: '' }))).toMatchObject({ kind: 'malformed', detail: expect.stringContaining('batch_id') });
  });

  test('each kind names its own effect', () => {
    expect(adapter.effectOf(body({ type: 'message_batch.result', batch_id: 'b', custom_id: 'c', result: { type: 'canceled' } }))).toEqual({
      detailType: 'BatchChildSettled',
      keyFields: ['b', 'c'],
      fields: { batchId: 'b', customId: 'c', childState: 'canceled' },
    });
    expect(adapter.effectOf(body({ type: 'message_batch.settled', batch_id: 'b', outcome: 'failed' }))).toMatchObject({
      detailType: 'BatchSettled',
      keyFields: ['b'],
    });
  });
});

describe('the API client against the fake batch API', () => {
  const secrets = new SecretsFixture();
  let api: FakeMessageBatchesApi;
  let client: MessageBatchesApi;
  let apiKeys: ApiKeySource;
  beforeAll(() => secrets.start());
  afterAll(() => secrets.stop());
  beforeEach(async () => {
    api = new FakeMessageBatchesApi();
    await api.start();
    const { id } = await secrets.create(api.apiKey);
    apiKeys = new ApiKeySource(new SecretCache(secrets.countingReader(), { ttlMs: 300_000, minRefreshIntervalMs: 1_000 }), id);
    client = new MessageBatchesApi({ urlTemplate: api.batchUrlTemplate, apiKeys, timeoutMs: 5_000 });
  });
  afterEach(() => api.stop());

  test('a batch in progress, then ended; its results in pages with a cursor, the last page without one', async () => {
    const batch = api.addBatch({ customIds: ['a', 'b', 'c', 'd', 'e'], errored: ['b'] });
    expect(await client.fetchBatch(batch.id)).toMatchObject({
      kind: 'batch',
      batch: { processingStatus: 'in_progress', expiresAt: batch.createdAt + 86_400_000 },
    });
    api.end(batch.id);
    const ended = await client.fetchBatch(batch.id);
    expect(ended).toMatchObject({ kind: 'batch', batch: { processingStatus: 'ended', endedAt: expect.any(Number) } });
    const first = await client.listResults(batch.id, undefined, 2);
    expect(first).toMatchObject({ kind: 'page', nextCursor: 'd' });
    expect(first.kind === 'page' && first.results.map((result) => [result.customId, result.state])).toEqual([
      ['e', 'succeeded'],
      ['d', 'succeeded'],
    ]);
    const second = await client.listResults(batch.id, 'd', 2);
    expect(second).toMatchObject({ kind: 'page', nextCursor: 'b' });
    const last = await client.listResults(batch.id, 'b', 2);
    expect(last).toEqual({ kind: 'page', results: [{ customId: 'a', state: 'succeeded', result: expect.objectContaining({ type: 'succeeded' }) }] });
    expect(api.requestsFor(batch.id).every((request) => request.authorized)).toBe(true);
  });

  test('unknown: not_found; 429: rate_limited; another batch under this id: an error, nothing fed', async () => {
    expect(await client.fetchBatch(`msgbatch_${randomUUID()}`)).toEqual({ kind: 'not_found' });
    const batch = api.addBatch({ customIds: ['a'] });
    api.rateLimit();
    expect(await client.fetchBatch(batch.id)).toMatchObject({ kind: 'rate_limited' });
    // A URL that serves one batch whatever id is asked for: its answer names another batch.
    const other = new MessageBatchesApi({ urlTemplate: `${api.url}/v1/messages/batches/${batch.id}?for={batchId}`, apiKeys });
    expect(await other.fetchBatch('msgbatch_someone_else')).toEqual({ kind: 'error', detail: 'mismatched_task' });
  });
});
