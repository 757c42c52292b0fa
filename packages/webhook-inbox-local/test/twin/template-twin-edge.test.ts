/**
 * Filters at the edge and the archive, in the twin, from an app's synthesized template, every AWS
 * call judged by the IAM gateway. The app's inbox keeps only Stripe's `payment_intent.succeeded`
 * and archives what it processes. Stated here on their own: a delivery of another type is
 * answered 200 `{"result":"filtered"}`; a kept one is answered 202, processed, and its exact bytes
 * appear in an object under `deliveries/source=stripe/day=<today>/` of the archive bucket the
 * inbox's ops configuration names, which `webhook-inbox search` lists; no call was refused.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { App, Stack } from 'aws-cdk-lib';
import { WebhookInbox, WebhookProvider } from '../../../../lib';
import { LocalOpsConfig } from '../../../../lib/contract';
import { run } from '../../../../cli/main';
import { ASSEMBLY_METADATA_CONTEXT } from '../../src/twin/synth';
import { stripeHeaders } from '../../../../test/support/senders';
import { startTemplateTwinProcess, waitFor } from '../../../../test/support/template-twin-process';

const STACK = 'EdgeAndArchive';

let dir: string;
let outdir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'template-twin-edge-'));
  outdir = join(dir, 'cdk.out');
  const app = new App({ outdir, context: { 'aws:cdk:disable-asset-staging': true, ...ASSEMBLY_METADATA_CONTEXT } });
  const stack = new Stack(app, STACK);
  new WebhookInbox(stack, 'Inbox', { providers: [WebhookProvider.stripe({ eventTypes: ['payment_intent.succeeded'] })], archive: {} });
  app.synth();
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('a dropped type is answered filtered; a kept one is processed and archived, listable in the twin’s S3 and by search', async () => {
  const twin = await startTemplateTwinProcess({ app: outdir, port: 0, stateDir: join(dir, 'state') });
  try {
    const [inbox] = twin.ready.inboxes;
    const stripe = inbox.providers.find((provider) => provider.name === 'stripe')!;
    const deliver = async (type: string) => {
      const timestamp = Math.floor(Date.now() / 1000);
      const body = JSON.stringify({ id: `evt_${randomUUID().replace(/-/g, '')}`, object: 'event', type, created: timestamp, data: { object: { id: 'pi_1' } } });
      const response = await fetch(stripe.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...stripeHeaders(body, timestamp, stripe.secret) },
        body,
      });
      return { body, status: response.status, answer: await response.text() };
    };
    expect(await deliver('customer.created')).toMatchObject({ status: 200, answer: '{"result":"filtered"}' });
    const kept = await deliver('payment_intent.succeeded');
    expect(kept.status).toBe(202);

    const config = JSON.parse(readFileSync(inbox.opsConfig, 'utf8')) as LocalOpsConfig;
    expect(config.archiveBucket).toBeDefined();
    const s3 = new S3Client({
      endpoint: config.endpoints!.s3,
      region: twin.ready.region,
      forcePathStyle: true,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    try {
      const prefix = `deliveries/source=stripe/day=${new Date().toISOString().slice(0, 10)}/`;
      const keys = await waitFor('an archive object', async () => {
        const listed = await s3.send(new ListObjectsV2Command({ Bucket: config.archiveBucket, Prefix: prefix }));
        return listed.Contents?.length ? listed.Contents.map((object) => object.Key!) : undefined;
      });
      const lines = (
        await Promise.all(keys.map(async (Key) => (await s3.send(new GetObjectCommand({ Bucket: config.archiveBucket, Key }))).Body!.transformToString()))
      )
        .join('')
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(lines.map((line) => Buffer.from(line.bodyBase64, 'base64').toString())).toEqual([kept.body]);
    } finally {
      s3.destroy();
    }

    let stdout = '';
    const now = Date.now();
    const code = await run(
      ['search', '--config', inbox.opsConfig, '--from', new Date(now - 600_000).toISOString(), '--to', new Date(now + 60_000).toISOString(), '--json'],
      { io: { stdout: (text) => (stdout += text), stderr: () => undefined } },
    );
    expect(code).toBe(0);
    expect(JSON.parse(stdout).map((entry: { eventType: string }) => entry.eventType)).toEqual(['payment_intent.succeeded']);

    expect((await twin.iam()).denials).toEqual([]);
  } finally {
    await twin.stop();
  }
});
