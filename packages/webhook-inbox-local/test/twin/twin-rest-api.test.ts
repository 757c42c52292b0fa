/**
 * The twin runs an inbox whose ingress is a REST API from its synthesized template: its front door
 * is built from the template's REST API (stage, resources, methods, binary media types) and hands
 * the verifier a REST API proxy event (payload 1.0) of its own making. The rules checked: a
 * signed delivery posted at the provider's URL (under the stage) is accepted and processed, its
 * bytes (not UTF-8) stored as sent; what no method serves is answered 403 by the front door,
 * never 3xx (HEAD or GET on the POST route, a trailing slash, an unknown path, no stage); Twilio's
 * deliveries to a webhook URL configured with a query (`:` unescaped, a bare flag, `%20`) are
 * accepted though the event carries the query decoded only. Its stage writes access logs, which a
 * REST API stage may only once the account's API Gateway CloudWatch role is set: the twin runs it
 * when told the account has the role, and refuses the app before anything starts when it has none.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { App, Stack } from 'aws-cdk-lib';
import twilio from 'twilio';
import { RestApiAccessLogging, WebhookInbox, WebhookIngress, WebhookProvider } from '../../../../lib';
import { LOCAL_AWS } from '../../src/aws/local-aws';
import { standardWebhooksHeaders, unixSeconds } from '../../src/providers/signing';
import { ASSEMBLY_METADATA_CONTEXT } from '../../src/twin/synth';
import { startTemplateTwinProcess, TemplateTwinProcess, waitFor } from '../../../../test/support/template-twin-process';
import { DeliveryStatus } from '../../../../lib/contract';

/** Twilio webhook URLs as configured in Twilio, each with a query whose bytes decoding loses: `:` unescaped, a bare flag, `%20`. */
const TWILIO_CONFIGURED: Record<string, string> = {
  'twilio-at': 'https://hooks.example.com/hooks/twilio-at?tenant=acme&at=10:30',
  'twilio-flag': 'https://hooks.example.com/hooks/twilio-flag?tenant=acme&debug',
  'twilio-note': 'https://hooks.example.com/hooks/twilio-note?note=a%20b',
};
const WEB_ACL_ARN = 'arn:aws:wafv2:us-east-1:000000000000:regional/webacl/webhooks/a1b2c3d4-5678-90ab-cdef-EXAMPLE11111';
/** The account's API Gateway CloudWatch role, as `aws apigateway get-account` would name it. */
const ACCOUNT_CLOUDWATCH_ROLE = 'arn:aws:iam::000000000000:role/apigateway-cloudwatch-logs';

/** One request, never following a redirect: its status and Location header. */
function send(
  url: string,
  method: string,
  headers: Record<string, string> = {},
  body: Buffer = Buffer.alloc(0),
): Promise<{ status: number; location?: string; body: string }> {
  return new Promise((resolve, reject) => {
    const framing = body.length === 0 ? {} : { 'content-length': String(body.length) };
    const req = request(url, { method, headers: { ...framing, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, location: res.headers.location, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject).end(body.length === 0 ? undefined : body);
  });
}

// One twin, of one app, serves every test of this file.
let dir: string;
let twin: TemplateTwinProcess;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'twin-rest-'));
  const outdir = join(dir, 'cdk.out');
  const app = new App({ outdir, context: { 'aws:cdk:disable-asset-staging': true, ...ASSEMBLY_METADATA_CONTEXT } });
  new WebhookInbox(new Stack(app, 'RestIngress'), 'Inbox', {
    providers: [WebhookProvider.answerline(), ...Object.entries(TWILIO_CONFIGURED).map(([name, webhookUrl]) => WebhookProvider.twilio({ name, webhookUrl }))],
    ingress: WebhookIngress.restApi({ webAclArn: WEB_ACL_ARN, accessLogging: RestApiAccessLogging.EXISTING_ACCOUNT_ROLE }),
  });
  app.synth();
  twin = await startTemplateTwinProcess({ app: outdir, port: 0, stateDir: join(dir, 'state'), apiGatewayCloudWatchRoleArn: ACCOUNT_CLOUDWATCH_ROLE });
});
afterAll(async () => {
  await twin?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the twin running a REST API ingress', () => {
  test('a signed delivery posted under the stage is accepted, stored byte for byte and processed', async () => {
    const [inbox] = twin.ready.inboxes;
    const answerline = inbox.providers.find((provider) => provider.name === 'answerline')!;
    expect(new URL(answerline.url).pathname).toBe('/prod/hooks/answerline');
    const taskId = `tsk_${randomUUID().slice(0, 8)}`;
    const [head, tail] = JSON.stringify({
      task: { id: taskId, status: 'COMPLETED', idempotencyKey: 'report-1', createdAt: new Date().toISOString() },
      response: { result: { answer: 'RAW' } },
    }).split('RAW');
    // Not UTF-8 inside a string, CRLF between tokens: any text round trip on the way would break the signature.
    const body = Buffer.concat([Buffer.from(head.replace('{', '{\r\n'), 'utf8'), Buffer.from([0xff, 0xfe]), Buffer.from(tail, 'utf8')]);
    const headers = standardWebhooksHeaders(answerline.secret, `msg_${randomUUID()}`, unixSeconds(), body);

    const answer = await send(answerline.url, 'POST', headers, body);
    expect([answer.status, JSON.parse(answer.body)]).toEqual([202, { result: 'accepted' }]);

    const dynamodb = new DynamoDBClient({ endpoint: twin.ready.services.dynamodb, region: twin.ready.region, credentials: LOCAL_AWS.credentials });
    try {
      const row = await waitFor(
        'the row processed',
        async () => {
          const { Items = [] } = await dynamodb.send(new ScanCommand({ TableName: inbox.tables.inbox }));
          return Items.find((item) => item.pk?.S === `answerline#${taskId}` && item.status?.S === DeliveryStatus.PROCESSED);
        },
        60_000,
      );
      expect(Buffer.from(row.body!.B!).equals(body)).toBe(true);
    } finally {
      dynamodb.destroy();
    }
    expect((await send(answerline.url, 'POST', headers, body)).status).toBe(200);
  });

  test('what no method serves is answered 403 by the front door, never a 3xx or a Location', async () => {
    const base = new URL(twin.ready.inboxes[0].providers[0].url).origin;
    const probes: [string, string][] = [
      ['HEAD', '/prod/hooks/answerline'],
      ['GET', '/prod/hooks/answerline'],
      ['PUT', '/prod/hooks/answerline'],
      ['POST', '/prod/hooks/answerline/'],
      ['POST', '/prod/hooks/unknown'],
      ['POST', '/prod/hooks'],
      ['POST', '/prod/'],
      ['POST', '/hooks/answerline'],
      ['GET', '/'],
    ];
    const answers = [];
    for (const [method, path] of probes) {
      answers.push([
        method,
        path,
        (await send(`${base}${path}`, method, { 'x-forwarded-proto': 'http' }, method === 'POST' ? Buffer.from('{}') : undefined)).status,
      ]);
    }
    expect(answers.filter(([, , status]) => Number(status) >= 300 && Number(status) < 400)).toEqual([]);
    expect(answers).toEqual(probes.map(([method, path]) => [method, path, 403]));
    // An unsigned POST on the route reaches the verifier and is refused there.
    expect((await send(`${base}/prod/hooks/answerline`, 'POST', { 'content-type': 'application/json' }, Buffer.from('{}'))).status).toBe(400);
  });
});

test('in an account without the API Gateway CloudWatch role, the same app is refused before anything starts, with API Gateway’s message', async () => {
  await expect(startTemplateTwinProcess({ app: join(dir, 'cdk.out'), port: 0, stateDir: join(dir, 'refused') })).rejects.toThrow(
    /stack RestIngress, resource InboxRestApiDeploymentStageprod\w+ \(Inbox\/RestApi\/DeploymentStage\.prod, AWS::ApiGateway::Stage\): failed to create: CloudWatch Logs role ARN must be set in account settings to enable logging/,
  );
});

describe('the twin running a REST API ingress: Twilio, whose query the REST API event carries only decoded', () => {
  // Twilio's rule, stated here: the signature is the base64 HMAC-SHA1, keyed by the Auth Token, of
  // the URL Twilio requested (the webhook URL exactly as configured in Twilio, its query included)
  // followed by each POST parameter's name and value, sorted by name; a JSON body is covered instead
  // by its hex SHA-256 in `bodySHA256`, which Twilio appends to that URL. The twin's own URL is
  // plain HTTP on a local port: the configured URL is what Twilio would sign.
  const CONFIGURED = TWILIO_CONFIGURED;
  const FORM = 'application/x-www-form-urlencoded';
  const queryOf = (url: string) => url.slice(url.indexOf('?'));
  const provider = (name: string) => twin.ready.inboxes[0].providers.find((each) => each.name === name)!;

  /** Waits until the provider's row of `eventId` is processed. */
  async function processed(name: string, eventId: string): Promise<void> {
    const dynamodb = new DynamoDBClient({ endpoint: twin.ready.services.dynamodb, region: twin.ready.region, credentials: LOCAL_AWS.credentials });
    try {
      await waitFor(
        `the ${name} row processed`,
        async () => {
          const { Items = [] } = await dynamodb.send(new ScanCommand({ TableName: twin.ready.inboxes[0].tables.inbox }));
          return Items.find((item) => item.pk?.S === `${name}#${eventId}` && item.status?.S === DeliveryStatus.PROCESSED);
        },
        60_000,
      );
    } finally {
      dynamodb.destroy();
    }
  }

  test.each(Object.entries(CONFIGURED))(
    '%s: a form delivery to %s signed by the twilio library is accepted and processed; its replay is a duplicate; a query Twilio could not have requested there is refused, naming the fix',
    async (name, webhookUrl) => {
      const { url, secret } = provider(name);
      const params = { MessageSid: `SM${randomUUID().replace(/-/g, '')}`, MessageStatus: 'delivered', To: '+15558675310', Body: 'Grüße + 100%' };
      const body = Buffer.from(new URLSearchParams(params).toString(), 'utf8');
      const signature = twilio.getExpectedTwilioSignature(secret, webhookUrl, params);
      expect(twilio.validateRequest(secret, signature, webhookUrl, params)).toBe(true);
      const headers = { 'content-type': FORM, 'x-twilio-signature': signature };

      const answer = await send(`${url}${queryOf(webhookUrl)}`, 'POST', headers, body);
      expect([answer.status, JSON.parse(answer.body)]).toEqual([202, { result: 'accepted' }]);
      const replay = await send(`${url}${queryOf(webhookUrl)}`, 'POST', headers, body);
      expect([replay.status, JSON.parse(replay.body)]).toEqual([200, { result: 'duplicate' }]);
      // The event id is the digest of the signed content: the configured URL, then the sorted parameters.
      const content = `${webhookUrl}${Object.keys(params)
        .sort()
        .map((key) => `${key}${params[key as keyof typeof params]}`)
        .join('')}`;
      await processed(name, createHash('sha256').update(content, 'utf8').digest('hex'));

      // Twilio signed another query (an extra parameter): this ingress cannot know how it was written.
      const other = `${webhookUrl}&extra=1`;
      const refused = await send(
        `${url}${queryOf(other)}`,
        'POST',
        { ...headers, 'x-twilio-signature': twilio.getExpectedTwilioSignature(secret, other, params) },
        body,
      );
      expect([refused.status, JSON.parse(refused.body)]).toEqual([
        400,
        { result: 'bad_signature', detail: expect.stringContaining('configure webhookUrl with the query Twilio requests') },
      ]);
    },
  );

  test('a JSON delivery, covered by the bodySHA256 Twilio appends to the configured URL, is accepted; another body under that hash is refused', async () => {
    const name = 'twilio-note';
    const { url, secret } = provider(name);
    const json = JSON.stringify({
      type: 'com.twilio.messaging.message.delivered',
      data: { messageSid: `SM${randomUUID().replace(/-/g, '')}`, body: '東京 🚀' },
    });
    const hash = createHash('sha256').update(json, 'utf8').digest('hex');
    const signedUrl = `${CONFIGURED[name]}&bodySHA256=${hash}`;
    const signature = twilio.getExpectedTwilioSignature(secret, signedUrl, {});
    expect(twilio.validateRequestWithBody(secret, signature, signedUrl, json)).toBe(true);
    const headers = { 'content-type': 'application/json', 'x-twilio-signature': signature };

    const answer = await send(`${url}${queryOf(signedUrl)}`, 'POST', headers, Buffer.from(json, 'utf8'));
    expect([answer.status, JSON.parse(answer.body)]).toEqual([202, { result: 'accepted' }]);
    await processed(name, createHash('sha256').update(signedUrl, 'utf8').digest('hex'));
    const forged = await send(`${url}${queryOf(signedUrl)}`, 'POST', headers, Buffer.from(json.replace('delivered', 'failed'), 'utf8'));
    expect([forged.status, JSON.parse(forged.body).result]).toEqual([400, 'bad_signature']);
  });
});
