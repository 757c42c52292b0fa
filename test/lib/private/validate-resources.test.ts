/**
 * The tables and queue a user brings are refused at synth when the runtime could not use them,
 * each refusal naming the prop and what is missing; an imported one (whose schema CDK cannot see)
 * only with its acknowledgement. The schema is stated here on its own, as docs/BRING-YOUR-OWN.md
 * writes it: inbox keys `pk` (S) / `sk` (S), TTL on `expiresAt`, keys-only indexes `pending`
 * (`pendingShard` S / `pendingSince` N), `awaiting` (`awaitShard` S / `awaitDueAt` N) and `jobRef`
 * (`jobRef` S, no sort key); results key `pk` (S) alone.
 */
import { App, CfnParameter, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { WebhookInbox, WebhookInboxProps } from '../../../lib';

const { STRING, NUMBER } = dynamodb.AttributeType;
const KEYS_ONLY = dynamodb.ProjectionType.KEYS_ONLY;

/** What Table and TableV2 take alike of an index. */
type IndexProps = Pick<dynamodb.GlobalSecondaryIndexProps, 'indexName' | 'partitionKey' | 'sortKey' | 'projectionType' | 'nonKeyAttributes'>;
const PENDING: IndexProps = {
  indexName: 'pending',
  partitionKey: { name: 'pendingShard', type: STRING },
  sortKey: { name: 'pendingSince', type: NUMBER },
  projectionType: KEYS_ONLY,
};
const AWAITING: IndexProps = {
  indexName: 'awaiting',
  partitionKey: { name: 'awaitShard', type: STRING },
  sortKey: { name: 'awaitDueAt', type: NUMBER },
  projectionType: KEYS_ONLY,
};
const JOB_REF: IndexProps = { indexName: 'jobRef', partitionKey: { name: 'jobRef', type: STRING }, projectionType: KEYS_ONLY };

/** An inbox table as the docs describe it, with `change` applied to its props and `indexes` in place of the three. */
function inboxTable(stack: Stack, change: Partial<dynamodb.TableProps> = {}, indexes: IndexProps[] = [PENDING, AWAITING, JOB_REF]): dynamodb.Table {
  const table = new dynamodb.Table(stack, 'MyInbox', {
    partitionKey: { name: 'pk', type: STRING },
    sortKey: { name: 'sk', type: STRING },
    timeToLiveAttribute: 'expiresAt',
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    ...change,
  });
  for (const index of indexes) table.addGlobalSecondaryIndex(index);
  return table;
}

function workQueue(stack: Stack, change: Partial<sqs.QueueProps> = {}): sqs.Queue {
  const deadLetterQueue = new sqs.Queue(stack, 'MyDlq');
  return new sqs.Queue(stack, 'MyWork', { visibilityTimeout: Duration.minutes(3), deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: 5 }, ...change });
}

/** Synthesizes an inbox built from `props`; what synth threw, or undefined. */
function synthError(props: (stack: Stack) => WebhookInboxProps): string | undefined {
  const app = new App();
  const stack = new Stack(app, 'Byo');
  new WebhookInbox(stack, 'Inbox', props(stack));
  try {
    app.synth();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

describe('a table defined in the app', () => {
  test('with the schema synthesizes, as Table or TableV2, indexes added before or after the inbox, any projection', () => {
    expect(
      synthError((stack) => ({ inboxTable: inboxTable(stack), resultsTable: new dynamodb.Table(stack, 'R', { partitionKey: { name: 'pk', type: STRING } }) })),
    ).toBeUndefined();
    expect(
      synthError((stack) => ({
        inboxTable: new dynamodb.TableV2(stack, 'V2', {
          partitionKey: { name: 'pk', type: STRING },
          sortKey: { name: 'sk', type: STRING },
          timeToLiveAttribute: 'expiresAt',
          globalSecondaryIndexes: [PENDING, { ...AWAITING, projectionType: dynamodb.ProjectionType.ALL }, JOB_REF],
        }),
        resultsTable: new dynamodb.TableV2(stack, 'R2', { partitionKey: { name: 'pk', type: STRING } }),
      })),
    ).toBeUndefined();
    const app = new App();
    const stack = new Stack(app, 'Later');
    const table = inboxTable(stack, {}, [PENDING]);
    new WebhookInbox(stack, 'Inbox', { inboxTable: table });
    table.addGlobalSecondaryIndex({ ...AWAITING, projectionType: dynamodb.ProjectionType.INCLUDE, nonKeyAttributes: ['state'] });
    table.addGlobalSecondaryIndex(JOB_REF);
    expect(() => app.synth()).not.toThrow();
  });

  test.each([
    [
      'without an index the runtime queries',
      (stack: Stack) => inboxTable(stack, {}, [PENDING, JOB_REF]),
      /inboxTable: global secondary index "awaiting" is missing \(partition key "awaitShard" \(S\), sort key "awaitDueAt" \(N\), any projection\)/,
    ],
    [
      'with an index key of the wrong type',
      (stack: Stack) => inboxTable(stack, {}, [{ ...PENDING, sortKey: { name: 'pendingSince', type: STRING } }, AWAITING, JOB_REF]),
      /inboxTable: global secondary index "pending" must have partition key "pendingShard" \(S\), sort key "pendingSince" \(N\), any projection; it has partition key "pendingShard" \(S\), sort key "pendingSince" \(S\)/,
    ],
    [
      'with a sort key on an index that has none',
      (stack: Stack) => inboxTable(stack, {}, [PENDING, AWAITING, { ...JOB_REF, sortKey: { name: 'receivedAt', type: NUMBER } }]),
      /inboxTable: global secondary index "jobRef" must have partition key "jobRef" \(S\), no sort key, any projection; it has partition key "jobRef" \(S\), sort key "receivedAt" \(N\)/,
    ],
    [
      'with another partition key',
      (stack: Stack) => inboxTable(stack, { partitionKey: { name: 'id', type: STRING } }),
      /inboxTable: partition key must be "pk" \(S\), got "id" \(S\)/,
    ],
    [
      'with another sort key',
      (stack: Stack) => inboxTable(stack, { sortKey: { name: 'sk', type: NUMBER } }),
      /inboxTable: sort key must be "sk" \(S\), got "sk" \(N\)/,
    ],
    ['without a sort key', (stack: Stack) => inboxTable(stack, { sortKey: undefined }), /inboxTable: sort key must be "sk" \(S\), got none/],
    [
      'without TTL',
      (stack: Stack) => inboxTable(stack, { timeToLiveAttribute: undefined }),
      /inboxTable: TTL must be enabled on "expiresAt" \(epoch seconds\), got none/,
    ],
    [
      'with TTL on another attribute',
      (stack: Stack) => inboxTable(stack, { timeToLiveAttribute: 'ttl' }),
      /inboxTable: TTL must be enabled on "expiresAt" \(epoch seconds\), got "ttl"/,
    ],
  ])('as inbox table %s is refused at synth', (_name, table, problem) => {
    const error = synthError((stack) => ({ inboxTable: table(stack) }));
    expect(error).toMatch(problem);
    expect(error).toContain('docs/BRING-YOUR-OWN.md#the-inbox-table');
  });

  test('as results table, with a sort key or a number key, is refused at synth', () => {
    expect(
      synthError((stack) => ({
        resultsTable: new dynamodb.Table(stack, 'R', { partitionKey: { name: 'pk', type: STRING }, sortKey: { name: 'sk', type: STRING } }),
      })),
    ).toMatch(/resultsTable: sort key must be absent, got "sk" \(S\) \(docs\/BRING-YOUR-OWN.md#the-results-table\)/);
    expect(synthError((stack) => ({ resultsTable: new dynamodb.TableV2(stack, 'R', { partitionKey: { name: 'pk', type: NUMBER } }) }))).toMatch(
      /resultsTable: partition key must be "pk" \(S\), got "pk" \(N\)/,
    );
  });

  test('every problem of a table is named at once', () => {
    const error = synthError((stack) => ({ inboxTable: inboxTable(stack, { timeToLiveAttribute: undefined }, [JOB_REF]) }));
    expect(error).toMatch(/TTL must be enabled on "expiresAt"/);
    expect(error).toMatch(/"pending" is missing/);
    expect(error).toMatch(/"awaiting" is missing/);
  });

  test('keys and index names that are tokens are not checked, and do not crash the check', () => {
    expect(
      synthError((stack) => {
        const name = new CfnParameter(stack, 'KeyName').valueAsString;
        const indexName = new CfnParameter(stack, 'IndexName').valueAsString;
        return { inboxTable: inboxTable(stack, { partitionKey: { name, type: STRING } }, [PENDING, { ...AWAITING, indexName }, JOB_REF]) };
      }),
    ).toBeUndefined();
  });
});

describe('an imported table', () => {
  test('is refused without its acknowledgement, with what to check and where it is documented', () => {
    const error = synthError((stack) => ({
      inboxTable: dynamodb.Table.fromTableName(stack, 'In', 'existing-inbox'),
      resultsTable: dynamodb.Table.fromTableArn(stack, 'Re', 'arn:aws:dynamodb:eu-west-1:111111111111:table/existing-results'),
    }));
    expect(error).toMatch(
      /inboxTable: an imported table .* unless you check it has partition key "pk" \(S\), sort key "sk" \(S\), TTL on "expiresAt", the global secondary indexes "pending", "awaiting", "jobRef" as docs\/BRING-YOUR-OWN.md#the-inbox-table describes, then set acknowledgeImportedInboxTable: true/,
    );
    expect(error).toMatch(
      /resultsTable: an imported table .* partition key "pk" \(S\), no sort key as docs\/BRING-YOUR-OWN.md#the-results-table describes, then set acknowledgeImportedResultsTable: true/,
    );
  });

  test('is accepted with its acknowledgement', () => {
    expect(
      synthError((stack) => ({
        inboxTable: dynamodb.TableV2.fromTableName(stack, 'In', 'existing-inbox'),
        resultsTable: dynamodb.Table.fromTableAttributes(stack, 'Re', { tableName: 'existing-results' }),
        acknowledgeImportedInboxTable: true,
        acknowledgeImportedResultsTable: true,
      })),
    ).toBeUndefined();
  });
});

describe('a work queue defined in the app', () => {
  test('redriving after maxReceiveCount with a long enough visibility timeout synthesizes, its dead-letter queue watched', () => {
    const app = new App();
    const stack = new Stack(app, 'Queue');
    const queue = workQueue(stack);
    const inbox = new WebhookInbox(stack, 'Inbox', { workQueue: queue });
    expect(inbox.deadLetterQueue).toBe(queue.deadLetterQueue!.queue);
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::SQS::Queue', 2);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [
        { Name: 'QueueName', Value: { 'Fn::GetAtt': [stack.getLogicalId(queue.deadLetterQueue!.queue.node.defaultChild as sqs.CfnQueue), 'QueueName'] } },
      ],
    });
  });

  test.each([
    [
      'without a dead-letter queue',
      {},
      (stack: Stack) => new sqs.Queue(stack, 'Bare', { visibilityTimeout: Duration.minutes(3) }),
      /workQueue: it has no dead-letter queue \(redrive policy\).*give it deadLetterQueue: \{ queue, maxReceiveCount: 5 \}/,
    ],
    [
      'redriving after another number of receives than maxReceiveCount',
      { maxReceiveCount: 5 },
      (stack: Stack) => workQueue(stack, { deadLetterQueue: { queue: new sqs.Queue(stack, 'Three'), maxReceiveCount: 3 } }),
      /workQueue: its redrive policy's maxReceiveCount \(3\) must be the inbox's maxReceiveCount \(5\)/,
    ],
    [
      'whose visibility timeout is shorter than the processor timeout',
      { processorFunctionProps: { timeout: Duration.minutes(2) } },
      (stack: Stack) => workQueue(stack, { visibilityTimeout: Duration.minutes(1) }),
      /workQueue: its visibility timeout \(1 minute\) must be at least the processor's timeout \(2 minutes/,
    ],
    [
      "left at SQS's default visibility timeout (30 s) for a 31 s processor",
      { processorFunctionProps: { timeout: Duration.seconds(31) } },
      (stack: Stack) => workQueue(stack, { visibilityTimeout: undefined }),
      /workQueue: its visibility timeout \(30 seconds\) must be at least the processor's timeout \(31 seconds/,
    ],
    [
      'that is FIFO',
      {},
      (stack: Stack) => workQueue(stack, { fifo: true }),
      /workQueue: a FIFO queue is refused: the verifier sends without a message group id/,
    ],
  ])('%s is refused at synth', (_name, props: WebhookInboxProps, queue, problem) => {
    const error = synthError((stack) => ({ ...props, workQueue: queue(stack) }));
    expect(error).toMatch(problem);
    expect(error).toContain('docs/BRING-YOUR-OWN.md#the-work-queue');
  });

  test('with a deadLetterQueue that is not the one it redrives to is refused', () => {
    expect(synthError((stack) => ({ workQueue: workQueue(stack), deadLetterQueue: new sqs.Queue(stack, 'Other') }))).toMatch(
      /deadLetterQueue: it is not the queue workQueue's redrive policy sends to/,
    );
  });

  test('a visibility timeout or processor timeout that is a token is not checked', () => {
    expect(
      synthError((stack) => ({
        workQueue: workQueue(stack, { visibilityTimeout: Duration.seconds(new CfnParameter(stack, 'Visibility', { type: 'Number' }).valueAsNumber) }),
        processorFunctionProps: { timeout: Duration.minutes(10) },
      })),
    ).toBeUndefined();
    expect(
      synthError((stack) => ({
        workQueue: workQueue(stack, { visibilityTimeout: Duration.seconds(1) }),
        processorFunctionProps: { timeout: Duration.seconds(new CfnParameter(stack, 'Timeout', { type: 'Number' }).valueAsNumber) },
      })),
    ).toBeUndefined();
  });
});

describe('an imported work queue', () => {
  const arn = 'arn:aws:sqs:eu-west-1:111111111111:existing-work';

  test('is refused without its acknowledgement and its dead-letter queue, saying what to check', () => {
    const error = synthError((stack) => ({ workQueue: sqs.Queue.fromQueueArn(stack, 'Work', arn), processorFunctionProps: { timeout: Duration.minutes(1) } }));
    expect(error).toMatch(/deadLetterQueue: required with an imported workQueue/);
    expect(error).toMatch(
      /workQueue: an imported queue .* redrives to deadLetterQueue after maxReceiveCount \(5\) receives and its visibility timeout is at least the processor's timeout \(1 minute\) and set acknowledgeImportedWorkQueue: true \(docs\/BRING-YOUR-OWN.md#the-work-queue\)/,
    );
  });

  test('is accepted with its acknowledgement and its dead-letter queue; a FIFO one never', () => {
    const dlq = (stack: Stack) => sqs.Queue.fromQueueArn(stack, 'Dlq', 'arn:aws:sqs:eu-west-1:111111111111:existing-dlq');
    expect(
      synthError((stack) => ({ workQueue: sqs.Queue.fromQueueArn(stack, 'Work', arn), deadLetterQueue: dlq(stack), acknowledgeImportedWorkQueue: true })),
    ).toBeUndefined();
    expect(
      synthError((stack) => ({
        workQueue: sqs.Queue.fromQueueArn(stack, 'Work', `${arn}.fifo`),
        deadLetterQueue: dlq(stack),
        acknowledgeImportedWorkQueue: true,
      })),
    ).toMatch(/workQueue: a FIFO queue is refused/);
  });
});
