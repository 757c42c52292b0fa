/**
 * The console page in headless Chromium, served by the listener on a plain loopback server from a
 * source the tests change: it shows the deliveries, rows and dead-letter depth of each inbox,
 * follows an alarm into ALARM without a reload, shows text from requests as text, loads nothing
 * from outside, and says when the twin stops answering.
 */
import { existsSync } from 'node:fs';
import { createServer, request, Server } from 'node:http';
import { Browser, chromium, Locator, Page } from 'playwright-core';
import { consoleRequestListener } from '../../../src/twin/console/server';
import { closeServer, listenOnLoopback } from '../../../src/aws/loopback';
import { FakeConsoleSource, representativeSnapshot } from './fake-console';
import { DeliveryStatus } from '../../../../../lib/contract';

const CHROMIUM = '/usr/bin/chromium';
/** A refresh is due every second: two of them and a margin. */
const REFRESH_TIMEOUT_MS = 3_000;
const ALARM_RED = 'rgb(198, 40, 40)';

let browser: Browser;
let server: Server;
let origin: string;
let source: FakeConsoleSource;
let page: Page;

beforeAll(async () => {
  // Failing, not skipping: a machine without Chromium would otherwise pass with the page untested.
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (.ci/run does)`);
  source = new FakeConsoleSource(representativeSnapshot(Date.now()));
  const listener = consoleRequestListener(source);
  server = createServer((req, res) => {
    if (listener(req, res)) return;
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not the console');
  });
  origin = await listenOnLoopback(server);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
});

afterAll(async () => {
  await browser?.close();
  server?.closeAllConnections();
  await closeServer(server);
});

beforeEach(async () => {
  source.current = representativeSnapshot(Date.now());
  source.failure = undefined;
  page = await browser.newPage();
});

afterEach(async () => {
  await page.close();
});

async function openConsole(): Promise<void> {
  await page.goto(`${origin}/console`);
  await page.locator('[data-testid=connection][data-state=live]').waitFor({ timeout: REFRESH_TIMEOUT_MS });
}

const texts = (selector: string) => page.locator(selector).allTextContents();

/** A CSS property as the browser computed it (the tests compile without the DOM's types: the node is untyped). */
const computedStyle = (locator: Locator, property: 'backgroundColor' | 'borderLeftColor') =>
  locator.evaluate((node, name) => node.ownerDocument.defaultView.getComputedStyle(node)[name], property);

test('the page shows each provider of each inbox with its recent deliveries, the rows by status and the dead-letter depth', async () => {
  await openConsole();
  const answers = page.locator('[data-testid=inbox][data-inbox=answers]');
  const answerline = answers.locator('[data-testid=provider][data-provider=answerline]');
  expect(await answerline.locator('[data-testid=provider-url]').textContent()).toBe('POST http://127.0.0.1:4010/hooks/answerline');
  expect(await answerline.locator('[data-testid=delivery-reason]').allTextContents()).toEqual(['accepted', 'duplicate', 'stale_timestamp', 'store_error']);
  expect(await answerline.locator('[data-testid=delivery-status]').allTextContents()).toEqual(['202', '200', '400', '503']);
  const stripe = answers.locator('[data-testid=provider][data-provider=stripe]');
  expect(await stripe.locator('[data-testid=delivery-reason]').allTextContents()).toEqual(['bad_signature', 'accepted', 'too_large']);

  const rows = await answers.locator('[data-testid=row-count]').evaluateAll((tiles) => tiles.map((tile) => [tile.dataset.status, tile.dataset.count]));
  expect(rows).toEqual([
    [DeliveryStatus.RECEIVED, '1'],
    [DeliveryStatus.PROCESSING, '2'],
    [DeliveryStatus.PROCESSED, '118'],
    ['FAILED', '1'],
    [DeliveryStatus.DEAD, '2'],
  ]);
  expect(await answers.locator('[data-testid=dead-letter-depth]').textContent()).toBe('2');
  const billing = page.locator('[data-testid=inbox][data-inbox=billing]');
  expect(await billing.locator('[data-testid=provider][data-provider=github] [data-testid=delivery-reason]').allTextContents()).toEqual(['accepted']);
  expect(await billing.locator('[data-testid=dead-letter-depth]').textContent()).toBe('0');
});

test('an alarm the twin flips to ALARM turns red, first in the list, and a new delivery appears, without a reload', async () => {
  await openConsole();
  const alarm = page.locator('[data-testid=alarm][data-alarm=answers-SignatureFailures]');
  expect(await alarm.getAttribute('data-state')).toBe('OK');
  expect(await computedStyle(alarm.locator('[data-testid=alarm-state]'), 'backgroundColor')).not.toBe(ALARM_RED);
  await page.evaluate(() => Object.assign(globalThis, { sameDocument: true }));

  source.setAlarmState('answers-SignatureFailures', 'ALARM', 'Threshold Crossed: 1 datapoint [12.0] was greater than or equal to the threshold (5.0).');
  source.addDelivery('answers', { at: new Date().toISOString(), provider: 'stripe', status: 401, reason: 'bad_signature', requestId: 'req-new' });
  await page.locator('[data-testid=alarm][data-alarm=answers-SignatureFailures][data-state=ALARM]').waitFor({ timeout: REFRESH_TIMEOUT_MS });

  expect(await computedStyle(alarm.locator('[data-testid=alarm-state]'), 'backgroundColor')).toBe(ALARM_RED);
  expect(await computedStyle(alarm, 'borderLeftColor')).toBe(ALARM_RED);
  expect(await alarm.locator('[data-testid=alarm-reason]').textContent()).toContain('[12.0]');
  expect(await alarm.locator('[data-testid=alarm-runbook]').getAttribute('href')).toBe('https://runbook.example/webhook-inbox#signature-failures');
  // Named as the runbook names them, with their inbox when there are several.
  expect(await texts('[data-testid=alarm][data-state=ALARM] [data-testid=alarm-name]')).toEqual(['Answers deadLetterQueueDepth', 'Answers signatureFailures']);
  // A reason only for an alarm in ALARM.
  expect(await page.locator('[data-testid=alarm][data-state=OK] [data-testid=alarm-reason]').count()).toBe(0);
  expect(await page.locator('[data-testid=alarm-summary]').textContent()).toBe('2 in ALARM');
  expect(await page.title()).toBe('(2 in ALARM) Webhook inbox console');
  const stripe = page.locator('[data-testid=inbox][data-inbox=answers] [data-testid=provider][data-provider=stripe]');
  expect(await stripe.locator('[data-testid=delivery-request-id]').first().textContent()).toBe('req-new');
  expect(await page.evaluate(() => (globalThis as { sameDocument?: boolean }).sameDocument)).toBe(true);
});

test("the IAM gateway's denials are counted in the header, red once there is one, by function on hover, without a reload", async () => {
  source.current = { ...source.current, iam: { enforced: true, deniedByFunction: {} } };
  await openConsole();
  const badge = page.locator('[data-testid=iam-denials]');
  expect(await badge.textContent()).toBe('IAM: 0 AWS calls denied');
  expect(await badge.getAttribute('data-state')).toBe('clean');
  source.current = { ...source.current, iam: { enforced: true, deniedByFunction: { 'Shop/Inbox/Processor': 2, 'Shop/Reader': 1 } } };
  await page.locator('[data-testid=iam-denials][data-state=denied]').waitFor({ timeout: REFRESH_TIMEOUT_MS });
  expect(await badge.textContent()).toBe('IAM: 3 AWS calls denied');
  expect(await computedStyle(badge, 'backgroundColor')).toBe(ALARM_RED);
  expect(await badge.getAttribute('title')).toBe('Shop/Inbox/Processor: 2\nShop/Reader: 1');
  source.current = { ...source.current, iam: undefined };
  await page.locator('[data-testid=iam-denials][data-state=off]').waitFor({ timeout: REFRESH_TIMEOUT_MS });
  expect(await badge.textContent()).toBe('IAM not enforced');
});

test('a delivery reason carrying markup is shown as text and never runs, and a runbook that is not http(s) is not a link', async () => {
  const markup = '<script>window.injected = "script"</script><img src="/injected" onerror="window.injected = \'img\'">';
  source.addDelivery('answers', { at: new Date().toISOString(), provider: 'answerline', status: 400, reason: markup, requestId: '<b>req</b>' });
  source.current = {
    ...source.current,
    alarms: [
      ...source.current.alarms,
      {
        name: '<i>odd</i>',
        label: '<i>odd</i>',
        owner: '',
        state: 'ALARM',
        reason: markup,
        updatedAt: new Date().toISOString(),
        runbook: 'javascript:alert(1)',
      },
    ],
  };
  const requested: string[] = [];
  page.on('request', (sent) => requested.push(new URL(sent.url()).pathname));
  await openConsole();

  const inbox = page.locator('[data-testid=inbox][data-inbox=answers]');
  expect(await inbox.locator('[data-testid=delivery-reason]').first().textContent()).toBe(markup);
  expect(await inbox.locator('[data-testid=delivery-request-id]').first().textContent()).toBe('<b>req</b>');
  const odd = page.locator('[data-testid=alarm]', { has: page.locator('[data-testid=alarm-name]', { hasText: '<i>odd</i>' }) });
  expect(await odd.locator('[data-testid=alarm-reason]').textContent()).toBe(markup);
  expect(await odd.locator('[data-testid=alarm-runbook]').evaluate((node) => [node.tagName, node.textContent])).toEqual(['SPAN', 'javascript:alert(1)']);
  expect(await page.locator('main script, main img, main b, main i').count()).toBe(0);
  expect(await page.evaluate(() => (globalThis as { injected?: string }).injected)).toBeUndefined();
  expect(requested).not.toContain('/injected');
});

test('the page loads nothing but itself and its snapshots, and draws the dashboard as inline SVG', async () => {
  const requested: string[] = [];
  page.on('request', (sent) => requested.push(sent.url()));
  await openConsole();

  expect([...new Set(requested)].sort()).toEqual([`${origin}/console`, `${origin}/console/api/snapshot`]);
  const widgets = page.locator('[data-testid=dashboard][data-dashboard=answers] [data-testid=widget]');
  expect(await widgets.evaluateAll((nodes) => nodes.map((node) => node.dataset.title))).toEqual(['Deliveries by reason', 'Work queue']);
  const deliveries = widgets.first();
  expect(await deliveries.locator('svg[data-testid=chart] polyline').evaluateAll((lines) => lines.map((line) => line.dataset.label))).toEqual([
    'accepted',
    'duplicate',
    'bad_signature',
  ]);
  expect(await deliveries.locator('svg polyline').first().getAttribute('points')).toMatch(/^(\d+(\.\d)?,\d+(\.\d)? ){10,}/);
  expect(await deliveries.locator('[data-testid=series][data-label="refused %"]').textContent()).toBe('refused % — not drawn locally');
  expect(await widgets.nth(1).locator('[data-testid=series][data-label="oldest age (s)"]').textContent()).toBe('oldest age (s) (right)');
});

describe.each([800, 1280])('at %i px wide', (width) => {
  test('what the inboxes received comes first, then the alarms, then the dashboards; each alarm is one line; no name wraps and no word is broken', async () => {
    await page.setViewportSize({ width, height: 900 });
    // A long reason, which must be cut short rather than broken or wrapped.
    source.setAlarmState(
      'answers-SignatureFailures',
      'ALARM',
      `Threshold Crossed: ${'1 datapoint [12.0] was greater than or equal to the threshold (5.0). '.repeat(4)}`,
    );
    await openConsole();
    await page.locator('[data-testid=dashboard] [data-testid=chart]').first().waitFor();

    const top = (selector: string) =>
      page
        .locator(selector)
        .first()
        .evaluate((node) => node.getBoundingClientRect().top);
    const [inboxes, alarms, dashboards] = [await top('[data-testid=inbox]'), await top('[data-testid=alarms-panel]'), await top('[data-testid=dashboard]')];
    expect(inboxes).toBeLessThan(alarms);
    expect(alarms).toBeLessThan(dashboards);

    // The rule, stated here: a line box is a distinct top of the text's client rectangles.
    const lineCounts = (selector: string) =>
      page.locator(selector).evaluateAll((nodes) =>
        nodes.map((node) => {
          const range = node.ownerDocument.createRange();
          range.selectNodeContents(node);
          const tops = [...range.getClientRects()].filter((rect) => rect.width > 0).map((rect) => Math.round(rect.top));
          return [node.textContent, tops.filter((value, index) => tops.findIndex((other) => Math.abs(other - value) < 6) === index).length];
        }),
      );
    for (const selector of [
      '[data-testid=alarm]',
      '[data-testid=alarm-name]',
      '[data-testid=inbox] h2',
      '[data-testid=provider] h3',
      '[data-testid=widget] h3',
      '.tile .label',
    ]) {
      const counts = await lineCounts(selector);
      expect(counts.length).toBeGreaterThan(0);
      expect(counts.filter(([, lines]) => lines !== 1)).toEqual([]);
    }
    // Every word of the page lies on one line: no word is broken across two.
    const broken = await page.locator('main').evaluate((main) => {
      const found: string[] = [];
      const walker = main.ownerDocument.createTreeWalker(main, 4);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (const match of node.textContent.matchAll(/\S+/g)) {
          const range = main.ownerDocument.createRange();
          range.setStart(node, match.index);
          range.setEnd(node, match.index + match[0].length);
          const tops = new Set([...range.getClientRects()].filter((rect) => rect.width > 0).map((rect) => Math.round(rect.top)));
          if (tops.size > 1) found.push(match[0]);
        }
      }
      return found;
    });
    expect(broken).toEqual([]);
    // Nothing runs past the page's width.
    expect(await page.locator('html').evaluate((html) => html.scrollWidth)).toBeLessThanOrEqual(width);
  });
});

test('the page says when the snapshot fails, and comes back live when it answers again', async () => {
  await openConsole();
  source.failure = 'the inbox table is unreachable';
  const connection = page.locator('[data-testid=connection]');
  await page.locator('[data-testid=connection][data-state=offline]').waitFor({ timeout: REFRESH_TIMEOUT_MS });
  expect(await connection.textContent()).toBe('offline: snapshot failed: the inbox table is unreachable');

  source.failure = undefined;
  await page.locator('[data-testid=connection][data-state=live]').waitFor({ timeout: REFRESH_TIMEOUT_MS });
});

test('an inbox shows whether it runs and its breaker; its button pauses it and then resumes it, without a reload', async () => {
  source.flowChanges.length = 0;
  await openConsole();
  const flow = page.locator('[data-inbox=answers] [data-testid=flow]');
  await expect(flow.getAttribute('data-paused')).resolves.toBe('false');
  expect(await flow.locator('[data-testid=flow-state]').textContent()).toBe('RUNNING');
  expect(await flow.locator('[data-testid=flow-breaker]').textContent()).toBe('BREAKER CLOSED');

  await flow.locator('[data-testid=flow-pause]').click();
  await page.locator('[data-inbox=answers] [data-testid=flow][data-paused=true]').waitFor({ timeout: REFRESH_TIMEOUT_MS });
  expect(await flow.locator('[data-testid=flow-state]').textContent()).toBe('PAUSED');
  await flow.locator('[data-testid=flow-resume]').click();
  await page.locator('[data-inbox=answers] [data-testid=flow][data-paused=false]').waitFor({ timeout: REFRESH_TIMEOUT_MS });
  expect(source.flowChanges).toEqual(['answers pause', 'answers resume']);
  // An inbox whose source says nothing of flow control shows no button.
  expect(await page.locator('[data-inbox=billing] [data-testid=flow]').count()).toBe(0);
});

test('the flow endpoint takes only a JSON body naming an inbox and an action', async () => {
  source.flowChanges.length = 0;
  expect((await get('/console/api/flow')).status).toBe(405);
  expect((await send('/console/api/flow', 'text/plain', '{"inbox":"answers","action":"pause"}')).status).toBe(415);
  expect((await send('/console/api/flow', 'application/json', '{"inbox":"answers","action":"drop"}')).status).toBe(400);
  expect(source.flowChanges).toEqual([]);
});

test('the listener serves the snapshot as JSON, refuses other methods and other host names, and leaves other paths to the server', async () => {
  const snapshot = await get('/console/api/snapshot');
  expect(snapshot.status).toBe(200);
  expect(snapshot.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(JSON.parse(snapshot.body)).toEqual({ ...source.current, generatedAt: expect.any(String) });

  const html = await get('/console');
  expect(html.headers['content-security-policy']).toMatch(/default-src 'none'; script-src 'sha256-[^']+'; style-src 'sha256-[^']+'; connect-src 'self'/);
  expect(html.body).not.toMatch(/<(link|script)[^>]+(src|href)="(?!data:)/);

  expect((await get('/console', 'POST')).status).toBe(405);
  expect((await get('/console/api/snapshot', 'GET', 'rebound.example:8080')).status).toBe(403);
  expect(await get('/hooks/answerline')).toMatchObject({ status: 404, body: 'not the console' });
  expect(await get('/console/elsewhere')).toMatchObject({ status: 404, body: 'not the console' });
});

function send(path: string, contentType: string, body: string): Promise<{ status: number }> {
  return new Promise((resolve, reject) => {
    const sent = request(`${origin}${path}`, { method: 'POST', headers: { 'content-type': contentType } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
    });
    sent.on('error', reject);
    sent.end(body);
  });
}

function get(path: string, method = 'GET', host?: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const sent = request(`${origin}${path}`, { method, headers: host ? { host } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    sent.on('error', reject);
    sent.end();
  });
}
