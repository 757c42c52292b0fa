/**
 * `webhook-inbox hash`: the reference the delivery record logs for an id an operator holds. The
 * rule, stated here: `sha256:` and the first 16 hex digits of the SHA-256 of `<provider>#<eventId>`
 * (an event), `resource:<provider>#<resourceId>` (a resource) or `tenant:<value>` (a tenant). It
 * needs no target and makes no AWS request; and what it prints finds the verifier's real line.
 */
import { createHash } from 'node:crypto';
import { run } from '../../cli/main';
import { OpsClients } from '../../cli/clients';
import { answerlineBody, InboxHarness, PROVIDER, SecretsFixture, taskIdOf } from '../support/inbox-fixture';

const reference = (text: string) => `sha256:${createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16)}`;

/** Clients that must never be built: hash makes no AWS request. */
const noClients = (): OpsClients => {
  throw new Error('no clients expected');
};

async function runCli(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, { io: { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) }, clients: noClients });
  return { code, stdout, stderr };
}

test('an event id, a resource id and a tenant value each get their reference and a query for it, without a target', async () => {
  const event = await runCli(['hash', 'answerline#tsk_123#a']);
  expect(event).toMatchObject({ code: 0, stderr: '' });
  expect(event.stdout).toContain(`eventRef ${reference('answerline#tsk_123#a')}`);
  expect(event.stdout).toContain(`| filter eventRef = "${reference('answerline#tsk_123#a')}"`);

  const resource = await runCli(['hash', '--resource', 'stripe#pi_42', '--json']);
  expect(JSON.parse(resource.stdout)).toMatchObject({ field: 'resourceRef', reference: reference('resource:stripe#pi_42') });

  const tenant = await runCli(['hash', '--tenant', 'acme-0042', '--json']);
  expect(JSON.parse(tenant.stdout)).toMatchObject({ field: 'tenantRef', reference: reference('tenant:acme-0042') });
  expect(JSON.parse(tenant.stdout).query).toContain(`filter tenantRef = "${reference('tenant:acme-0042')}"`);
});

test('nothing, two things or a malformed event is a usage error, exit 2', async () => {
  for (const argv of [
    ['hash'],
    ['hash', 'answerline#tsk_1', '--tenant', 'x'],
    ['hash', 'no-provider'],
    ['hash', '--tenant', ''],
    ['hash', '--resource', 'x'],
  ]) {
    const outcome = await runCli(argv);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toMatch(/^webhook-inbox: /);
  }
});

describe('against the real record', () => {
  const secrets = new SecretsFixture();
  let h: InboxHarness;
  beforeAll(async () => {
    await secrets.start();
    h = await InboxHarness.create(secrets, 'hash-cli');
  });
  afterAll(async () => {
    h.destroy();
    await secrets.stop();
  });

  test("the reference it prints for an event is the one the verifier's line carries", async () => {
    const body = answerlineBody();
    await h.deliver(body);
    const { stdout } = await runCli(['hash', `${PROVIDER}#${taskIdOf(body)}`, '--json']);
    const [line] = h.capture.logs('delivery');
    expect(line.eventRef).toBe(JSON.parse(stdout).reference);
    h.expectLogsClean();
  });
});
