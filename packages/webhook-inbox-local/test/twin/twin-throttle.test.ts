/**
 * The twin throttles each route as API Gateway does, from the synthesized template's stage route
 * settings: a flood of forged requests on one provider's route is answered 429 past that route's
 * allowance, while another provider's genuine deliveries, sent at the same time, are all accepted.
 * The rule checked: a 429 is the answer only a sender over its own route's allowance gets.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { WebhookInbox, WebhookProvider } from '../../../../lib';
import { standardWebhooksHeaders, unixSeconds } from '../../src/providers/signing';
import { ASSEMBLY_METADATA_CONTEXT } from '../../src/twin/synth';
import { startTemplateTwinProcess, TemplateTwinProcess } from '../../../../test/support/template-twin-process';

/** The flooded route's allowance: 5 requests a second, bursts of 10. */
const FLOODED = { name: 'answerline', rateLimit: 5, burstLimit: 10 };
const QUIET = 'answerline-quiet';

let dir: string;
let twin: TemplateTwinProcess;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'twin-throttle-'));
  const outdir = join(dir, 'cdk.out');
  const app = new App({ outdir, context: { 'aws:cdk:disable-asset-staging': true, ...ASSEMBLY_METADATA_CONTEXT } });
  new WebhookInbox(new Stack(app, 'Throttled'), 'Inbox', {
    providers: [
      WebhookProvider.answerline({ name: FLOODED.name, throttle: { rateLimit: FLOODED.rateLimit, burstLimit: FLOODED.burstLimit } }),
      WebhookProvider.answerline({ name: QUIET }),
    ],
  });
  app.synth();
  twin = await startTemplateTwinProcess({ app: outdir, port: 0, stateDir: join(dir, 'state') });
});
afterAll(async () => {
  await twin?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function provider(name: string) {
  return twin.ready.inboxes[0].providers.find((candidate) => candidate.name === name)!;
}

async function post(url: string, headers: Record<string, string>, body: Buffer): Promise<{ status: number; body: string }> {
  const response = await fetch(url, { method: 'POST', headers, body });
  return { status: response.status, body: await response.text() };
}

function genuine(secret: string): { headers: Record<string, string>; body: Buffer } {
  const body = Buffer.from(
    JSON.stringify({ task: { id: `tsk_${randomUUID()}`, status: 'COMPLETED', createdAt: new Date().toISOString() }, response: { result: { answer: 42 } } }),
  );
  return { headers: standardWebhooksHeaders(secret, `msg_${randomUUID()}`, unixSeconds(), body), body };
}

test('a forged flood on one route gets 429s past its allowance; the other route’s genuine deliveries at the same time are all accepted', async () => {
  const flooded = provider(FLOODED.name);
  const quiet = provider(QUIET);
  const forged = Buffer.from('{"task":{"id":"forged"}}');
  const forgedHeaders = { ...standardWebhooksHeaders('whsec_' + Buffer.from('not the secret').toString('base64'), 'msg_forged', unixSeconds(), forged) };
  const flood = Promise.all(Array.from({ length: 60 }, () => post(flooded.url, forgedHeaders, forged)));
  const deliveries = Promise.all(
    Array.from({ length: 15 }, () => {
      const { headers, body } = genuine(quiet.secret);
      return post(quiet.url, headers, body);
    }),
  );
  const [floodAnswers, deliveryAnswers] = await Promise.all([flood, deliveries]);

  // The quiet route's own bucket (the default share) holds far more than 15: none of its deliveries is throttled.
  expect(deliveryAnswers.map((answer) => answer.status)).toEqual(Array(15).fill(202));
  const throttled = floodAnswers.filter((answer) => answer.status === 429);
  const reached = floodAnswers.filter((answer) => answer.status !== 429);
  // The flooded route lets through its burst (and what refills meanwhile), refused by the verifier; the rest is API Gateway's 429.
  expect(reached.length).toBeGreaterThanOrEqual(FLOODED.burstLimit);
  expect(reached.length).toBeLessThan(FLOODED.burstLimit + 10);
  expect(reached.every((answer) => answer.status === 401 || answer.status === 400)).toBe(true);
  expect(throttled.length).toBe(60 - reached.length);
  expect(JSON.parse(throttled[0].body)).toEqual({ message: 'Too Many Requests' });

  // A genuine delivery on the flooded route waits for its bucket to refill (one token in 200 ms), then is accepted.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const { headers, body } = genuine(flooded.secret);
  expect((await post(flooded.url, headers, body)).status).toBe(202);
});
