/**
 * The console of a running twin, in headless Chromium: the twin runs its app's synthesized
 * template (in a process of its own), the demo's deliveries show on the page with their answers,
 * no alarm pages for a clean demo, and a poison delivery (its authoritative read always fails) turns the dead-
 * deliveries alarm red once its attempts are spent, without a reload. The twin's app also serves a
 * generic HMAC provider from its settings, and answers the Slack and Zoom presets' URL checks,
 * Discord's interactions and Square's notifications as those providers require.
 */
import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Browser, chromium, Page } from 'playwright-core';
import { standardWebhooksHeaders, unixSeconds } from '../../src/providers/signing';
import type { TwinProcessReady, TwinProcessRequest } from '../support/twin-process';
import { startTwinProcess, TwinProcessHandle } from '../support/twin-process-handle';

const CHROMIUM = '/usr/bin/chromium';
const ROOT = join(__dirname, '..', '..', '..', '..');
const POISON_RESOURCE = 'resp_poison';
/** The Discord application the twin's `discord` provider is given the public key of. */
const DISCORD_APP = generateKeyPairSync('ed25519');
const DISCORD_PUBLIC_KEY = Buffer.from(DISCORD_APP.publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('hex');

let browser: Browser;
let twinProcess: TwinProcessHandle;
let twin: TwinProcessReady;
let stateDir: string;
let page: Page;

beforeAll(async () => {
  // Failing, not skipping: a machine without Chromium would otherwise pass with the page untested.
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (.ci/run does)`);
  stateDir = mkdtempSync(join(tmpdir(), 'twin-console-'));
  const request: TwinProcessRequest = {
    options: {
      port: 0,
      providers: [
        'answerline',
        'standard-webhooks',
        // The generic scheme with its settings, as a --providers file gives them: Slack's signing rule.
        {
          name: 'slack',
          preset: 'hmac',
          signatureHeader: 'X-Slack-Signature',
          signaturePrefix: 'v0=',
          signedContent: 'v0:{timestamp}:{body}',
          timestampHeader: 'X-Slack-Request-Timestamp',
          idJsonPath: 'event_id',
        },
        // The presets whose URL checks are answered at the edge, one under another name.
        { name: 'slack-events', preset: 'slack' },
        'zoom',
        'discord',
        'square',
      ],
      // Discord's key pair is the application's: the twin can only be told its public half.
      secrets: { discord: DISCORD_PUBLIC_KEY },
      stateDir,
      // Two attempts of two seconds each, and the reconciler's minute every two seconds: a poison row dies within half a minute.
      timing: { processorTimeoutSeconds: 2, sweepAfterSeconds: 120, reconcileEverySeconds: 2 },
      maxReceiveCount: 2,
    },
    poisonResource: { provider: 'standard-webhooks', resourceId: POISON_RESOURCE },
    demo: true,
  };
  twinProcess = await startTwinProcess(request);
  twin = twinProcess.ready;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  page = await browser.newPage();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await twinProcess?.stop();
  rmSync(stateDir, { recursive: true, force: true });
});

const alarm = (construct: string) => page.locator(`[data-testid=alarm][data-alarm*="${construct}"]`);

test('the console shows the demo deliveries with their answers, and no alarm pages for them', async () => {
  const summary = twin.demo!;
  expect(summary.processed).toBe(summary.answers.accepted);
  // Each forged delivery is refused; whether it left a record is counted (twin-demo.test.ts covers none).
  expect(summary.forged.refused).toBeGreaterThan(0);
  expect(summary.forged.recorded).toBeLessThanOrEqual(summary.forged.refused);
  await page.goto(twin.consoleUrl!);
  await page.locator('[data-testid=connection][data-state=live]').waitFor({ timeout: 5_000 });
  const reasons = await page.locator('[data-testid=delivery-reason]').allTextContents();
  expect(reasons.filter((reason) => reason === 'accepted')).toHaveLength(summary.answers.accepted);
  expect(reasons).toContain('bad_signature');
  expect(await page.locator('[data-testid=row-count][data-status=PROCESSED]').first().textContent()).toContain(String(summary.processed));
  // Each alarm has been evaluated on the twin's metrics; a clean demo ends with none in ALARM: it
  // runs the reconciler first, as its schedule does after a deploy, and waits for its period.
  expect(summary.alarms.firing).toEqual([]);
  expect(summary.alarms.ok).toBeGreaterThan(5);
  await page.locator('[data-testid=alarm][data-state=INSUFFICIENT_DATA]').first().waitFor({ state: 'detached', timeout: 10_000 });
  await alarm('ReconcilerNotRunning').and(page.locator('[data-state=OK]')).waitFor({ timeout: 20_000 });
  expect(await page.locator('[data-testid=alarm]').count()).toBeGreaterThan(0);
  expect(await page.locator('[data-testid=alarm][data-state=ALARM]').allTextContents()).toEqual([]);
}, 90_000);

test('the shipped ops CLI works against the twin unchanged: status reads its queues, events lists what the demo published', () => {
  const cli = (...args: string[]) => {
    const run = spawnSync(process.execPath, [join(ROOT, 'assets', 'cli', 'webhook-inbox.js'), ...args, '--config', twin.opsConfigPath, '--json'], {
      encoding: 'utf8',
    });
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
    return JSON.parse(run.stdout) as unknown;
  };
  expect(cli('status')).toMatchObject({ inboxName: 'local-twin', deadLetterQueue: { visible: 0 } });
  const events = cli('events', '--limit', '100') as { detailType: string }[];
  expect(events.filter((event) => event.detailType === 'JobResultDecided').length).toBeGreaterThan(0);
});

test('a poison delivery turns the dead-deliveries alarm red once its attempts are spent, without a reload', async () => {
  expect(await alarm('DeadDeliveries').getAttribute('data-state')).toBe('OK');
  const body = Buffer.from(JSON.stringify({ type: 'response.completed', timestamp: unixSeconds(), data: { id: POISON_RESOURCE } }));
  const answer = await fetch(twin.urls['standard-webhooks'], {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...standardWebhooksHeaders(twin.secrets['standard-webhooks'], `msg_${randomUUID()}`, unixSeconds(), body) },
    body,
  });
  expect(answer.status).toBe(202);
  await alarm('DeadDeliveries').and(page.locator('[data-state=ALARM]')).waitFor({ timeout: 60_000 });
  // The queue moves the message to the DLQ on the receive after its last allowed one; the twin samples depths every few seconds.
  await page.locator('[data-testid=dead-letter-depth]').filter({ hasText: /\b1\b/ }).first().waitFor({ timeout: 30_000 });
  // The runbook the installed construct ships (here, the repository's own), not a URL nothing confirms.
  expect(await alarm('DeadDeliveries').locator('[data-testid=alarm-runbook]').textContent()).toBe('./docs/RUNBOOK.md#dead-deliveries');
}, 90_000);

test('serves a generic HMAC provider from its settings: a delivery signed by its rule is accepted, a forged one refused', async () => {
  // Slack's rule, stated here: v0= and the hex HMAC-SHA256 of "v0:<timestamp>:<body>" with the signing secret.
  const slackHeaders = (secret: string, body: string) => {
    const timestamp = String(unixSeconds());
    const signature = createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex');
    return { 'content-type': 'application/json', 'x-slack-request-timestamp': timestamp, 'x-slack-signature': `v0=${signature}` };
  };
  const body = JSON.stringify({ type: 'event_callback', event_id: `Ev${randomUUID().slice(0, 8)}`, event: { type: 'app_mention' } });
  const signed = await fetch(twin.urls.slack, { method: 'POST', headers: slackHeaders(twin.secrets.slack, body), body });
  const forged = await fetch(twin.urls.slack, { method: 'POST', headers: slackHeaders('not-the-secret', body), body });
  expect({ signed: signed.status, forged: forged.status }).toEqual({ signed: 202, forged: 400 });
});

test("answers the Slack and Zoom presets' URL checks through the twin's front door, as the providers ask", async () => {
  // Each provider's rule, stated here: v0= and the hex HMAC-SHA256 of "v0:<timestamp>:<body>".
  const signed = (secret: string, signature: string, timestampHeader: string, body: string) => {
    const timestamp = String(unixSeconds());
    const mac = createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex');
    return { 'content-type': 'application/json', [timestampHeader]: timestamp, [signature]: `v0=${mac}` };
  };
  const challenge = `challenge-${randomUUID()}`;
  const verification = JSON.stringify({ token: 'Jhj5dZrVaK7ZwHHjRyZWjbDl', challenge, type: 'url_verification' });
  const slack = await fetch(twin.urls['slack-events'], {
    method: 'POST',
    headers: signed(twin.secrets['slack-events'], 'x-slack-signature', 'x-slack-request-timestamp', verification),
    body: verification,
  });
  expect({ status: slack.status, type: slack.headers.get('content-type'), body: await slack.text() }).toEqual({
    status: 200,
    type: 'text/plain',
    body: challenge,
  });

  const plainToken = randomUUID().replace(/-/g, '').slice(0, 22);
  const validation = JSON.stringify({ payload: { plainToken }, event_ts: Date.now(), event: 'endpoint.url_validation' });
  const zoom = await fetch(twin.urls.zoom, {
    method: 'POST',
    headers: signed(twin.secrets.zoom, 'x-zm-signature', 'x-zm-request-timestamp', validation),
    body: validation,
  });
  expect({ status: zoom.status, type: zoom.headers.get('content-type') }).toEqual({ status: 200, type: 'application/json' });
  expect(await zoom.json()).toEqual({ plainToken, encryptedToken: createHmac('sha256', twin.secrets.zoom).update(plainToken).digest('hex') });
});

test("answers Discord's interactions and Square's notifications through the twin's front door, as those providers require", async () => {
  // Discord's rule, stated here: the hex Ed25519 signature of the timestamp followed by the body.
  const discordHeaders = (body: string, privateKey = DISCORD_APP.privateKey) => {
    const timestamp = String(unixSeconds());
    const signature = sign(null, Buffer.from(`${timestamp}${body}`), privateKey).toString('hex');
    return { 'content-type': 'application/json', 'x-signature-timestamp': timestamp, 'x-signature-ed25519': signature };
  };
  const answer = async (response: Response) => ({ status: response.status, type: response.headers.get('content-type'), body: await response.text() });
  const ping = JSON.stringify({ id: '787053080478613555', token: 'ThisIsATokenFromDiscordThatIsVeryLong', type: 1, version: 1 });
  const pong = await fetch(twin.urls.discord, { method: 'POST', headers: discordHeaders(ping), body: ping });
  expect(await answer(pong)).toEqual({ status: 200, type: 'application/json', body: '{"type":1}' });
  const forged = await fetch(twin.urls.discord, { method: 'POST', headers: discordHeaders(ping, generateKeyPairSync('ed25519').privateKey), body: ping });
  expect(forged.status).toBe(401);
  const command = JSON.stringify({ id: String(Date.now()), type: 2, token: `token-${randomUUID()}`, data: { name: 'note' }, version: 1 });
  const deferred = await fetch(twin.urls.discord, { method: 'POST', headers: discordHeaders(command), body: command });
  expect(await answer(deferred)).toEqual({ status: 200, type: 'application/json', body: '{"type":5}' });

  // Square's rule, stated here: the base64 HMAC-SHA256 of the notification URL the twin registers
  // its Square providers with, followed by the body.
  const event = JSON.stringify({ merchant_id: '6SSW7HV8K2ST5', type: 'payment.updated', event_id: randomUUID(), data: { type: 'payment' } });
  const squareSignature = (url: string) => createHmac('sha256', twin.secrets.square).update(`${url}${event}`).digest('base64');
  const square = (url: string) =>
    fetch(twin.urls.square, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-square-hmacsha256-signature': squareSignature(url) },
      body: event,
    });
  expect((await square(twin.urls.square)).status).toBe(400);
  expect((await square('https://localhost/hooks/square')).status).toBe(202);
});
