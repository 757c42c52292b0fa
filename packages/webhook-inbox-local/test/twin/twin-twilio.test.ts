/**
 * A running twin serving the Twilio preset (`--provider twilio`), in a process of its own: real
 * HTTP deliveries signed by the `twilio` library over the URL the twin says its provider signs
 * (its `signedUrl`, the template's webhook URL; the twin's own is plain HTTP on a local port), a
 * form body at a URL with a query and a JSON body through `bodySHA256`, each processed exactly
 * once; a replayed form delivery deduplicated; a bad signature refused with 400.
 *
 * Twilio's rule, stated here on its own: the signature is the base64 HMAC-SHA1, keyed by the Auth
 * Token, of the URL with its query followed by each POST parameter's name and value, sorted by
 * name; Twilio signs no id, so the event is named by the SHA-256 of that signed content.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import twilio from 'twilio';
import type { TwinProcessReady, TwinProcessRequest } from '../support/twin-process';
import { startTwinProcess, TwinProcessHandle } from '../support/twin-process-handle';
import { DeliveryStatus } from '../../../../lib/contract';

const ROOT = join(__dirname, '..', '..', '..', '..');
const FORM = 'application/x-www-form-urlencoded';
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

let twinProcess: TwinProcessHandle;
let twin: TwinProcessReady;
let stateDir: string;

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), 'twin-twilio-'));
  const request: TwinProcessRequest = { options: { port: 0, providers: ['twilio'], stateDir } };
  twinProcess = await startTwinProcess(request);
  twin = twinProcess.ready;
}, 120_000);

afterAll(async () => {
  await twinProcess?.stop();
  rmSync(stateDir, { recursive: true, force: true });
});

/** The shipped ops CLI against the twin, its JSON report. */
function cli(...args: string[]): unknown {
  const run = spawnSync(process.execPath, [join(ROOT, 'assets', 'cli', 'webhook-inbox.js'), ...args, '--config', twin.opsConfigPath, '--json'], {
    encoding: 'utf8',
  });
  expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
  return JSON.parse(run.stdout) as unknown;
}

/** The WebhookReceived effects the twin published, by event id. */
function receivedEffects(): Map<string, number> {
  const events = cli('events', '--limit', '1000', '--detail-type', 'WebhookReceived') as { detail: { eventId: string } }[];
  const counts = new Map<string, number>();
  for (const event of events) counts.set(event.detail.eventId, (counts.get(event.detail.eventId) ?? 0) + 1);
  return counts;
}

/** Polls until `done` holds (the processor runs on its own schedule), or fails after the bound. */
async function until(done: () => boolean, what: string): Promise<void> {
  for (let attempt = 0; attempt < 120; attempt++) {
    if (done()) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`the twin never got there: ${what}`);
}

/** A POST to the twin's Twilio endpoint, with the query Twilio requested. */
const post = (query: string, body: string, headers: Record<string, string>) =>
  fetch(`${twin.urls.twilio}${query ? `?${query}` : ''}`, { method: 'POST', headers: { 'i-twilio-idempotency-token': 'twin-test', ...headers }, body });

test('the twin says which URL its Twilio provider signs: https, the provider path, not its own http URL', () => {
  expect(twin.urls.twilio).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/hooks\/twilio$/);
  expect(twin.signedUrls.twilio).toBe('https://localhost/hooks/twilio');
});

test("a form delivery and a JSON one signed by Twilio's library are accepted and processed exactly once; a replay is a duplicate; a bad signature is refused", async () => {
  const token = twin.secrets.twilio;
  const webhookUrl = twin.signedUrls.twilio;

  // A status callback at a URL with a query; a repeated, an empty, a unicode and a `+` parameter.
  const query = 'tenant=acme&note=caf%C3%A9';
  const params = {
    MessageSid: `SM${sha256(String(Date.now())).slice(0, 32)}`,
    MessageStatus: 'delivered',
    To: '+15558675310',
    Body: 'Grüße + 100%',
    ErrorCode: '',
  };
  const body = `${new URLSearchParams(params).toString()}&MediaUrl0=https%3A%2F%2Fm%2Fb&MediaUrl0=https%3A%2F%2Fm%2Fa`;
  const signedParams = { ...params, MediaUrl0: ['https://m/b', 'https://m/a'] };
  const signature = twilio.getExpectedTwilioSignature(token, `${webhookUrl}?${query}`, signedParams);
  expect(twilio.validateRequest(token, signature, `${webhookUrl}?${query}`, signedParams)).toBe(true);
  const formContent =
    `${webhookUrl}?${query}` +
    `Body${params.Body}ErrorCode` +
    `MediaUrl0https://m/aMediaUrl0https://m/bMessageSid${params.MessageSid}MessageStatusdeliveredTo${params.To}`;

  // A JSON body, covered by its hex SHA-256 in the URL's bodySHA256.
  const json = JSON.stringify({ type: 'com.twilio.messaging.message.delivered', data: { messageSid: params.MessageSid, body: '東京 🚀' } });
  const jsonQuery = `bodySHA256=${sha256(json)}`;
  const jsonSignature = twilio.getExpectedTwilioSignature(token, `${webhookUrl}?${jsonQuery}`, {});
  expect(twilio.validateRequestWithBody(token, jsonSignature, `${webhookUrl}?${jsonQuery}`, json)).toBe(true);

  const form = await post(query, body, { 'content-type': FORM, 'x-twilio-signature': signature });
  expect({ status: form.status, body: await form.json() }).toMatchObject({ status: 202, body: { result: 'accepted' } });
  const jsonAnswer = await post(jsonQuery, json, { 'content-type': 'application/json', 'x-twilio-signature': jsonSignature });
  expect({ status: jsonAnswer.status, body: await jsonAnswer.json() }).toMatchObject({ status: 202, body: { result: 'accepted' } });

  // The same request again (Twilio's retry, or a replay): answered 2xx, never stored twice.
  const replay = await post(query, body, { 'content-type': FORM, 'x-twilio-signature': signature });
  expect({ status: replay.status, body: await replay.json() }).toMatchObject({ status: 200, body: { result: 'duplicate' } });

  // Refused with 400: another token's signature; the right one over the twin's own http URL; the body changed.
  for (const [forgedQuery, forgedBody, forged] of [
    [query, body, twilio.getExpectedTwilioSignature('another-auth-token', `${webhookUrl}?${query}`, signedParams)],
    [query, body, twilio.getExpectedTwilioSignature(token, `${twin.urls.twilio}?${query}`, signedParams)],
    [query, body.replace('delivered', 'failed'), signature],
  ]) {
    const answer = await post(forgedQuery, forgedBody, { 'content-type': FORM, 'x-twilio-signature': forged });
    expect({ status: answer.status, body: await answer.json() }).toMatchObject({ status: 400, body: { result: 'bad_signature' } });
  }

  const formId = sha256(formContent);
  const jsonId = sha256(`${webhookUrl}?${jsonQuery}`);
  await until(() => {
    const effects = receivedEffects();
    return effects.has(formId) && effects.has(jsonId);
  }, 'both deliveries processed');
  // Another reconciler run finds nothing left to enqueue: still one effect each, both rows processed once.
  cli('reconcile');
  const effects = receivedEffects();
  expect([effects.get(formId), effects.get(jsonId)]).toEqual([1, 1]);
  expect(effects.size).toBe(2);
  for (const id of [formId, jsonId]) {
    expect(cli('inspect', `twilio#${id}`)).toMatchObject({ row: { status: DeliveryStatus.PROCESSED }, quarantined: [] });
  }
}, 120_000);
