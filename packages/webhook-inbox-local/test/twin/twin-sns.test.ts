/**
 * A running twin serves Amazon SNS through its front door, with the SNS stand-in as SNS: the twin's
 * own app with `--provider sns` (synthesized here, run in a process of its own), and messages
 * signed with the stand-in's key from the ready line, posted over real HTTP. The rules, as SNS
 * documents them: a subscription confirmation is confirmed by requesting its SubscribeURL and
 * answered 2xx, never stored; a notification is stored under its MessageId and processed once, a
 * retry of it (the same MessageId) is a duplicate; SNS signs every topic's messages, so a message
 * of a topic the inbox does not serve is refused. Every AWS call the functions make is judged
 * against their roles' policies from the template.
 */
import { createPrivateKey, randomUUID, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { LOCAL_ACCOUNT, LOCAL_AWS, LOCAL_REGION } from '../../src/aws/local-aws';
import { SnsMessageFields, snsHeaders, snsMessage, SnsMessageOptions } from '../../src/aws/sns/stand-in';
import { synthesizeTwinApp } from '../../src/twin/app';
import { ReadyLine, startTemplateTwinProcess, TemplateTwinProcess, waitFor } from '../../../../test/support/template-twin-process';
import { DeliveryStatus } from '../../../../lib/contract';

/** The topic the twin's SNS provider serves, as its docs name it: the twin's own account and region. */
const TWIN_TOPIC = `arn:aws:sns:${LOCAL_REGION}:${LOCAL_ACCOUNT}:webhook-inbox-twin`;
const FOREIGN_TOPIC = `arn:aws:sns:${LOCAL_REGION}:210987654321:someone-elses-topic`;

let dir: string;
let twin: TemplateTwinProcess;
let ready: ReadyLine;
let provider: ReadyLine['inboxes'][number]['providers'][number];
let dynamodb: DynamoDBClient;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'twin-sns-'));
  const assembly = synthesizeTwinApp({ providers: ['sns'], processorTimeoutSeconds: 5, sweepAfterSeconds: 60, reconcileEveryMinutes: 1 });
  try {
    twin = await startTemplateTwinProcess({ app: assembly, port: 0, stateDir: join(dir, 'state') });
  } finally {
    rmSync(assembly, { recursive: true, force: true });
  }
  ready = twin.ready;
  provider = ready.inboxes[0].providers.find((candidate) => candidate.name === 'sns')!;
  dynamodb = new DynamoDBClient({ endpoint: ready.services.dynamodb, ...LOCAL_AWS });
}, 120_000);

afterAll(async () => {
  dynamodb?.destroy();
  await twin?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A message as SNS posts it, signed with the stand-in's key the ready line gives as the provider's secret. */
function message(options: Partial<SnsMessageOptions> = {}): SnsMessageFields {
  return snsMessage({ signingKey: createPrivateKey(provider.secret) }, { topicArn: TWIN_TOPIC, origin: ready.services.sns, ...options });
}

async function post(fields: SnsMessageFields): Promise<{ status: number; body: string }> {
  const response = await fetch(provider.url, { method: 'POST', headers: snsHeaders(fields), body: JSON.stringify(fields) });
  return { status: response.status, body: await response.text() };
}

async function inboxRows(): Promise<Record<string, string>[]> {
  const { Items = [] } = await dynamodb.send(new ScanCommand({ TableName: ready.inboxes[0].tables.inbox, ConsistentRead: true }));
  return Items.map((item) => Object.fromEntries(Object.entries(item).map(([name, value]) => [name, value.S ?? value.N ?? ''])));
}

/** The WebhookReceived events the processor put on the bus, by the event id they name. */
function receivedEventIds(): string[] {
  return readFileSync(ready.events, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { type: string; detailType?: string; detail?: { eventId?: string } })
    .filter((entry) => entry.type === 'event' && entry.detailType === 'WebhookReceived')
    .map((entry) => entry.detail!.eventId!);
}

test('the ready line names the stand-in as SNS: an HTTPS host whose CA, made for this run, says it is not Amazon', async () => {
  expect(provider).toMatchObject({ adapter: 'sns', topicArns: [TWIN_TOPIC] });
  expect(provider).not.toHaveProperty('secretArn');
  const caPem = readFileSync(ready.snsCaFile, 'utf8');
  expect(new X509Certificate(caPem).subject).toContain('not Amazon');
  // The host proves itself with a certificate of that CA, and serves the certificate messages name.
  const { SigningCertURL } = message();
  const served = await new Promise<string>((resolve, reject) => {
    request(SigningCertURL, { ca: caPem }, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () => resolve(text));
    })
      .on('error', reject)
      .end();
  });
  expect(new X509Certificate(served).checkIssued(new X509Certificate(caPem))).toBe(true);
});

test('a subscription confirmation is confirmed at its SubscribeURL before the answer, answered 200 and never stored', async () => {
  const confirmation = message({ type: 'SubscriptionConfirmation' });
  const answer = await post(confirmation);
  expect(answer.status).toBe(200);
  expect(await twin.snsConfirmations()).toContainEqual({ topicArn: TWIN_TOPIC, token: confirmation.Token });
  expect((await inboxRows()).filter((row) => row.pk?.includes(confirmation.MessageId))).toEqual([]);
});

test('notifications are stored under their MessageId and processed once; a retry is a duplicate; another topic is refused 400', async () => {
  const notifications = [
    message({ message: JSON.stringify({ order: `A-${randomUUID().slice(0, 6)}`, note: 'Grüße 👋' }) }),
    message({ signatureVersion: '1', subject: 'Order shipped', message: JSON.stringify({ order: `B-${randomUUID().slice(0, 6)}` }) }),
  ];
  for (const fields of notifications) expect((await post(fields)).status).toBe(202);
  // SNS retries with the same message, signature and all.
  const retry = await post(notifications[0]);
  expect(retry.status).toBe(200);
  expect(JSON.parse(retry.body)).toMatchObject({ result: 'duplicate' });
  const foreign = message({ topicArn: FOREIGN_TOPIC });
  const refused = await post(foreign);
  expect(refused.status).toBe(400);
  expect(JSON.parse(refused.body)).toMatchObject({ detail: expect.stringContaining('TopicArn') });

  const ids = notifications.map((fields) => fields.MessageId);
  const rows = await waitFor('both notifications processed', async () => {
    const found = (await inboxRows()).filter((row) => row.sk === 'delivery' && ids.some((id) => row.pk === `sns#${id}`));
    return found.length === ids.length && found.every((row) => row.status === DeliveryStatus.PROCESSED) ? found : undefined;
  });
  // One claim each: processed once.
  expect(rows.map((row) => row.attempts)).toEqual(['1', '1']);
  expect((await inboxRows()).some((row) => row.pk?.includes(foreign.MessageId))).toBe(false);
  const events = await waitFor('their effects', () => {
    const seen = receivedEventIds().filter((id) => ids.includes(id));
    return seen.length >= ids.length ? seen : undefined;
  });
  expect(events.sort()).toEqual([...ids].sort());

  const iam = await twin.iam();
  expect(iam.enforced).toBe(true);
  expect(iam.denials).toEqual([]);
  // Judged, not skipped: the verifier's writes and enqueues, and the processor's claims and events.
  expect(iam.evaluated).toMatchObject({ 'LocalTwin/Inbox/VerifierRole': expect.any(Number), 'LocalTwin/Inbox/ProcessorRole': expect.any(Number) });
});
