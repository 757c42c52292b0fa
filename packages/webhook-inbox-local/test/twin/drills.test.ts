/**
 * The runbook's dead-delivery drill on the example app (bin/app.ts), as docs/RUNBOOK.md has the
 * operator run it: the twin with `--time-scale 60`, one signed Answerline result for a job the
 * example's processing function refuses (`drill-dead-…`). With the work queue's visibility timeout
 * shortened as much (180 s → 3 s), its five attempts are spent and the row is DEAD, its message in
 * the dead-letter queue and the dead-deliveries alarm in ALARM, without waiting 12 minutes.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DeliveryStatus, InboxAttr } from '../../../../lib/contract';
import { standardWebhooksHeaders, unixSeconds } from '../../src/providers/signing';
import { synthesizeProject } from '../../src/twin/synth';
import { ROOT, startTemplateTwinProcess, TemplateTwinProcess, waitFor } from '../../../../test/support/template-twin-process';

const LOCAL = { accessKeyId: 'local', secretAccessKey: 'local' };
let dir: string;
let twin: TemplateTwinProcess;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'drills-'));
  const app = synthesizeProject(ROOT, join(dir, 'cdk.out'));
  twin = await startTemplateTwinProcess({ app, port: 0, stateDir: join(dir, 'state'), timeScale: 60 });
}, 120_000);

afterAll(async () => {
  await twin?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('with --time-scale 60, the work queue comes back after 3 s and a drill-dead job is dead-lettered and pages', async () => {
  const [inbox] = twin.ready.inboxes;
  const sqs = new SQSClient({ endpoint: twin.ready.services.sqs, region: twin.ready.region, credentials: LOCAL, useQueueUrlAsEndpoint: false });
  const dynamodb = new DynamoDBClient({ endpoint: twin.ready.services.dynamodb, region: twin.ready.region, credentials: LOCAL });
  try {
    const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: inbox.queues.work, AttributeNames: ['VisibilityTimeout'] }));
    // The template's 180 s (six times the processor's 30 s timeout), 60 times shorter.
    expect(Attributes?.VisibilityTimeout).toBe('3');

    const answerline = inbox.providers.find((provider) => provider.name === 'answerline')!;
    const taskId = `tsk_drill_${randomUUID().slice(0, 8)}`;
    const body = JSON.stringify({
      task: { id: taskId, status: 'COMPLETED', idempotencyKey: `drill-dead-${taskId}`, createdAt: new Date().toISOString() },
      response: { result: {} },
    });
    const response = await fetch(answerline.url, {
      method: 'POST',
      headers: standardWebhooksHeaders(answerline.secret, `msg_${randomUUID()}`, unixSeconds(), Buffer.from(body)),
      body,
    });
    expect(response.status).toBe(202);

    const row = await waitFor(
      'the drill row to be DEAD',
      async () => {
        const { Items = [] } = await dynamodb.send(new ScanCommand({ TableName: inbox.tables.inbox }));
        return Items.find((item) => JSON.stringify(item).includes(taskId) && item[InboxAttr.STATUS]?.S === DeliveryStatus.DEAD);
      },
      90_000,
    );
    expect(row[InboxAttr.LAST_ERROR]?.S).toBe('EffectDispatchError: the processing function failed (Unhandled: Error)');
    await waitFor(
      'the dead-deliveries alarm',
      async () => {
        const snapshot = (await (await fetch(`${twin.ready.console}/api/snapshot`)).json()) as { alarms: { name: string; state: string }[] };
        return snapshot.alarms.find((alarm) => alarm.name.includes('DeadDeliveries') && alarm.state === 'ALARM');
      },
      60_000,
    );
  } finally {
    sqs.destroy();
    dynamodb.destroy();
  }
}, 180_000);
