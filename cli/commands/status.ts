import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Defaults, InboxAttr as A, InboxItemKind, OpsConfig } from '../../lib/contract';
import { BoundedCount } from '../../lambda/shared/stores/dynamo';
import { DynamoDbSubmissionStore } from '../../lambda/shared/stores/submission-store';
import { inboxStoreOf, OpsClients } from '../clients';
import { scanAll } from '../../lambda/shared/stores/dynamo';
import { countStranded, isMissingIndex } from './common';
import { flowReport, FlowReport } from './flow';

export interface QueueDepth {
  /** Messages waiting to be received. */
  readonly visible: number;
  /** Messages received and not yet deleted (being processed, or waiting out a visibility timeout). */
  readonly inFlight: number;
}

export type { BoundedCount };

export interface StatusReport {
  readonly inboxName: string;
  readonly workQueue: QueueDepth;
  /** Null when the inbox has no dead-letter queue. */
  readonly deadLetterQueue: QueueDepth | null;
  /**
   * Rows neither PROCESSED nor DEAD, pending since longer than `olderThanSeconds`, from the sweep's
   * watermark up: the reconciler's sweep owes them.
   */
  readonly stranded: BoundedCount & { readonly olderThanSeconds: number };
  /** Altered duplicates kept beside their originals (a Scan); null with `skipScan`. */
  readonly quarantined: { readonly count: number; readonly itemsRead: number } | null;
  /** Submissions from the awaiting index; null when the table has no such index (yet). */
  readonly submissions: { readonly awaiting: BoundedCount; readonly overdue: BoundedCount } | null;
  /** Paused or running, the circuit breaker, the rows waiting (docs/FLOW-CONTROL.md). */
  readonly flow: FlowReport;
}

export interface StatusOptions {
  readonly now: number;
  /** Skip the Scan that counts quarantined copies (large tables). */
  readonly skipScan?: boolean;
  /** Rows counted per shard and question at most; bounds the read. */
  readonly perShardLimit?: number;
}

export const STRANDED_AFTER_SECONDS = Defaults.SWEEP_AFTER_SECONDS;

export async function status(clients: OpsClients, config: OpsConfig, options: StatusOptions): Promise<StatusReport> {
  const limit = options.perShardLimit ?? Defaults.LEDGER_COUNT_PER_SHARD;
  const [workQueue, deadLetterQueue, stranded, quarantined, submissions, flow] = await Promise.all([
    queueDepth(clients.sqs, config.workQueueUrl),
    config.deadLetterQueueUrl ? queueDepth(clients.sqs, config.deadLetterQueueUrl) : Promise.resolve(null),
    countStranded(inboxStoreOf(clients, config), options.now - STRANDED_AFTER_SECONDS * 1000, limit),
    options.skipScan ? Promise.resolve(null) : countQuarantined(clients.dynamodb, config.inboxTable),
    countSubmissions(clients.dynamodb, config.inboxTable, options.now, limit),
    flowReport(clients, config, options.now, limit),
  ]);
  return {
    inboxName: config.inboxName,
    workQueue,
    deadLetterQueue,
    stranded: { ...stranded, olderThanSeconds: STRANDED_AFTER_SECONDS },
    quarantined,
    submissions,
    flow,
  };
}

async function queueDepth(client: SQSClient, queueUrl: string): Promise<QueueDepth> {
  const out = await client.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return {
    visible: Number(out.Attributes?.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0),
  };
}

async function countQuarantined(client: DynamoDBClient, tableName: string): Promise<{ count: number; itemsRead: number }> {
  const { matched, itemsRead } = await scanAll(
    client,
    {
      TableName: tableName,
      FilterExpression: 'begins_with(#sk, :quarantine)',
      ExpressionAttributeNames: { '#sk': A.SK },
      ExpressionAttributeValues: { ':quarantine': { S: InboxItemKind.QUARANTINE_PREFIX } },
      Select: 'COUNT',
    },
    () => undefined,
  );
  return { count: matched, itemsRead };
}

/**
 * Submissions still AWAITING a result (the awaiting index), and those of them due for a check
 * now: first due at their provider's horizon, so an entry due now is past it with no result.
 */
async function countSubmissions(
  client: DynamoDBClient,
  tableName: string,
  now: number,
  limit: number,
): Promise<{ awaiting: BoundedCount; overdue: BoundedCount } | null> {
  try {
    const { awaiting, due } = await new DynamoDbSubmissionStore(client, tableName).countAwaiting(now, limit);
    return { awaiting, overdue: due };
  } catch (error) {
    if (isMissingIndex(error)) return null;
    throw error;
  }
}
