import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { createTables, resourceNames } from '../../local/provision';
import { uniqueName } from '../support/inbox-fixture';

/**
 * The ledger client as a user's app gets it: `cdk-webhook-inbox/client`, resolved through the
 * package's exports to the bundle `npm run bundle` ships, using the app's own DynamoDBClient.
 */
describe('the packaged submission ledger client', () => {
  const dynamodb = new DynamoDBClient({});
  afterAll(() => dynamodb.destroy());

  test('resolves through the package exports to the shipped bundle and records a submission', async () => {
    const entry = require.resolve('cdk-webhook-inbox/client');
    expect(entry).toMatch(/assets\/client\/index\.js$/);
    const { SubmissionLedger } = require(entry) as typeof import('../../client');
    const names = resourceNames(uniqueName('client'));
    await createTables(dynamodb, names);

    const ledger = new SubmissionLedger({ client: dynamodb, tableName: names.inboxTable });
    const first = await ledger.recordSubmission({ provider: 'answerline', taskId: 'tsk_packaged' });
    const again = await ledger.recordSubmission({ provider: 'answerline', taskId: 'tsk_packaged' });

    expect(first).toMatchObject({ outcome: 'recorded', key: 'ledger:answerline#tsk_packaged' });
    expect(again).toMatchObject({ outcome: 'already_recorded' });
    const item = await dynamodb.send(
      new GetItemCommand({ TableName: names.inboxTable, Key: { pk: { S: 'ledger:answerline#tsk_packaged' }, sk: { S: 'submission' } } }),
    );
    expect(item.Item).toMatchObject({ state: { S: 'AWAITING' }, awaitDueAt: { N: expect.any(String) } });
  });
});
