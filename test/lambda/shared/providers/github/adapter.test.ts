import { randomUUID } from 'node:crypto';
import { sign, verify } from '@octokit/webhooks-methods';
import { AdapterKind, MetricName } from '../../../../../lib/contract';
import { PresetBench, presetContract, PresetSpec } from '../../../../support/preset-contract';
import { sha256Hex } from '../../../../support/inbox-fixture';
import { flipByte, GITHUB_EXAMPLE, githubHeaders, tamperSignature, textSecret } from '../../../../support/senders';

const SIGNATURE = 'x-hub-signature-256';
const DELIVERY = 'x-github-delivery';

const issueOpened = (note: string) => ({
  action: 'opened',
  issue: { number: Math.floor(Math.random() * 1e6), title: note, user: { login: 'octocat' } },
  repository: { id: 1296269, full_name: 'octo-org/hello-world' },
  sender: { login: 'octocat' },
});

const spec: PresetSpec = {
  name: 'github',
  adapter: AdapterKind.GITHUB,
  eventType: 'issues',
  newSecret: textSecret,
  payload: issueOpened,
  // A redelivery keeps its X-GitHub-Delivery GUID.
  sign: (body, secret, _timestamp, retryOf) => githubHeaders(body, secret, 'issues', retryOf?.[DELIVERY]),
  // GitHub signs the body only: the inbox key is the body's digest, never the unsigned delivery GUID.
  eventId: (body) => sha256Hex(body),
  signatureHeader: SIGNATURE,
  // GitHub signs no timestamp: there is no freshness to judge.
  malformed: [
    ['a missing X-Hub-Signature-256 (only the legacy SHA-1 header left)', () => ({ [SIGNATURE]: undefined }), SIGNATURE],
    ['the SHA-1 signature in X-Hub-Signature-256', (h) => ({ [SIGNATURE]: h['x-hub-signature'] }), SIGNATURE],
    ['a signature without its sha256= prefix', (h) => ({ [SIGNATURE]: h[SIGNATURE].slice('sha256='.length) }), SIGNATURE],
    ['a truncated signature', (h) => ({ [SIGNATURE]: h[SIGNATURE].slice(0, -1) }), SIGNATURE],
  ],
};

const bench = PresetBench.use(spec);

presetContract(bench);

describe("GitHub's documented example", () => {
  test('@octokit/webhooks-methods produces it, and verify() accepts it; one changed byte is bad_signature', async () => {
    expect(await sign(GITHUB_EXAMPLE.secret, GITHUB_EXAMPLE.payload)).toBe(GITHUB_EXAMPLE.signature);
    expect(await verify(GITHUB_EXAMPLE.secret, GITHUB_EXAMPLE.payload, GITHUB_EXAMPLE.signature)).toBe(true);
    const { adapter, keys } = bench.adapter(GITHUB_EXAMPLE.secret);
    const headers = { [SIGNATURE]: GITHUB_EXAMPLE.signature };
    const payload = Buffer.from(GITHUB_EXAMPLE.payload);

    expect(adapter.verify(headers, payload, keys, 0)).toEqual({ ok: true, key: keys[0] });
    expect(adapter.verify(headers, flipByte(payload), keys, 0)).toMatchObject({ ok: false, reason: 'bad_signature' });
    expect(adapter.verify({ [SIGNATURE]: tamperSignature(GITHUB_EXAMPLE.signature) }, payload, keys, 0)).toMatchObject({ ok: false, reason: 'bad_signature' });
    expect(adapter.verify({ [SIGNATURE]: GITHUB_EXAMPLE.signature.toUpperCase().replace('SHA256=', 'sha256=') }, payload, keys, 0).ok).toBe(true);
  });

  test('through the verifier it is accepted and stored under its body digest (the body need not be JSON)', async () => {
    const config = await bench.h.addProvider('github', AdapterKind.GITHUB, GITHUB_EXAMPLE.secret);
    const delivery = randomUUID();

    const answer = await bench.post(
      GITHUB_EXAMPLE.payload,
      { [SIGNATURE]: GITHUB_EXAMPLE.signature, [DELIVERY]: delivery, 'x-github-event': 'push' },
      {},
      bench.h.verifier({ providers: [config] }),
    );

    expect(answer).toEqual({ statusCode: 202, result: 'accepted' });
    expect((await bench.row(sha256Hex(GITHUB_EXAMPLE.payload)))!.body).toEqual(Buffer.from(GITHUB_EXAMPLE.payload));
  });
});

describe('events and deliveries', () => {
  test('ping (sent when a hook is created) is verified, answered 200 test, and stores nothing', async () => {
    const ping = bench.bytes({ zen: 'Design for failure.', hook_id: 492013017, hook: { type: 'Repository', events: ['issues'] } });
    const headers = await githubHeaders(ping, bench.secret, 'ping');
    bench.h.markSensitive(headers[SIGNATURE]);

    expect(await bench.post(ping, headers)).toEqual({ statusCode: 200, result: 'test' });
    expect(await bench.post(ping, { ...headers, [SIGNATURE]: tamperSignature(headers[SIGNATURE]) })).toMatchObject({
      statusCode: 400,
      result: 'bad_signature',
    });
    await bench.h.expectNothingAdmitted();
    expect(bench.h.capture.metric(MetricName.TEST_DELIVERY, 'github')).toBe(1);
  });

  test('a redelivery keeps its GUID and is a duplicate; the same signed body replayed under a fresh GUID is a duplicate too (nothing signs the GUID)', async () => {
    const body = bench.bytes(issueOpened('redelivered from the settings page'));
    const first = await bench.deliver(body);
    bench.h.clock.advance(86_400_000);
    const redelivery = await bench.deliver(body, { retryOf: first.headers });
    const replayed = await bench.post(body, { ...first.headers, [DELIVERY]: randomUUID() });

    expect([first, redelivery, replayed].map((answer) => answer.result)).toEqual(['accepted', 'duplicate', 'duplicate']);
    expect(await bench.h.inboxItems()).toHaveLength(1);
    expect(await bench.h.takeMessages()).toEqual([bench.key(sha256Hex(body))]);
    // The row keeps the first delivery's GUID, for GitHub's delivery log.
    expect((await bench.row(sha256Hex(body)))!.meta).toMatchObject({ [DELIVERY]: first.headers[DELIVERY] });
  });

  test('a delivery without X-GitHub-Delivery is stored all the same (the GUID is only metadata)', async () => {
    const body = bench.bytes(issueOpened('no delivery header'));
    const headers = await bench.sign(body);
    expect(await bench.post(body, { ...headers, [DELIVERY]: undefined })).toEqual({ statusCode: 202, result: 'accepted' });
  });

  test('no timestamp is signed: even with zero tolerance a day-old delivery verifies, and replaying it stores nothing new', async () => {
    const verifier = bench.verifier({ tolerancePastSeconds: 0, toleranceFutureSeconds: 0 });
    const body = bench.bytes(issueOpened('an old delivery'));
    const first = await bench.deliver(body, { verifier });
    bench.h.clock.advance(86_400_000);

    expect(first).toMatchObject({ statusCode: 202 });
    expect(await bench.post(body, first.headers, {}, verifier)).toEqual({ statusCode: 200, result: 'duplicate' });
    expect(await bench.h.inboxItems()).toHaveLength(1);
  });

  test('the row keeps the event, delivery and hook id, and neither signature header', async () => {
    const body = bench.bytes(issueOpened('meta'));
    const answer = await bench.deliver(body);

    const row = await bench.expectStored(body, answer.headers);
    expect(row.meta).toMatchObject({ 'x-github-event': 'issues', [DELIVERY]: answer.headers[DELIVERY], 'x-github-hook-id': '492013017' });
    expect(row.meta).not.toHaveProperty('x-hub-signature');
    expect(JSON.stringify(row.meta)).not.toContain(answer.headers['x-hub-signature']);
  });
});
