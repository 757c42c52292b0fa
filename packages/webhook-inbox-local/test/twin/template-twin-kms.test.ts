/**
 * A signing secret encrypted with a customer-managed KMS key, in the twin: reading it takes
 * kms:Decrypt on that key, judged by the IAM gateway as AWS judges it. An app's stack holds an
 * inbox with two providers whose secrets it creates, each encrypted with a key of its own: the
 * Stripe secret's construct knows its key, so the verifier is granted it and the delivery is
 * admitted; the GitHub secret names the key behind its construct's back (its `CfnSecret`), so the
 * verifier is granted nothing on the key and its read is refused: the delivery is answered 503,
 * as it would be in AWS.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { WebhookInbox, WebhookProvider } from '../../../../lib';
import { LOCAL_ACCOUNT, LOCAL_REGION } from '../../src/aws/local-aws';
import { ASSEMBLY_METADATA_CONTEXT } from '../../src/twin/synth';
import { githubHeaders, stripeHeaders } from '../../../../test/support/senders';
import { ReadyLine, startTemplateTwinProcess } from '../../../../test/support/template-twin-process';

const STACK = 'EncryptedSecrets';

let dir: string;
let outdir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'template-twin-kms-'));
  outdir = join(dir, 'cdk.out');
  const app = new App({ outdir, context: { 'aws:cdk:disable-asset-staging': true, ...ASSEMBLY_METADATA_CONTEXT } });
  const stack = new Stack(app, STACK);
  const stripeKey = new kms.Key(stack, 'StripeKey', { enableKeyRotation: true });
  const githubKey = new kms.Key(stack, 'GitHubKey', { enableKeyRotation: true });
  const stripeSecret = new secretsmanager.Secret(stack, 'StripeSecret', { encryptionKey: stripeKey });
  const githubSecret = new secretsmanager.Secret(stack, 'GitHubSecret');
  (githubSecret.node.defaultChild as secretsmanager.CfnSecret).kmsKeyId = githubKey.keyArn;
  new WebhookInbox(stack, 'Inbox', {
    providers: [WebhookProvider.stripe({ signingSecret: stripeSecret }), WebhookProvider.github({ signingSecret: githubSecret })],
  });
  app.synth();
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

type ReadyProvider = ReadyLine['inboxes'][number]['providers'][number];

/** A Stripe event, signed by the `stripe` library; the status it is answered with. */
async function deliverStripe(stripe: ReadyProvider): Promise<number> {
  const timestamp = Math.floor(Date.now() / 1000);
  const body = JSON.stringify({ id: `evt_${randomUUID().replace(/-/g, '')}`, object: 'event', type: 'charge.succeeded', created: timestamp });
  const headers = { 'content-type': 'application/json', ...stripeHeaders(body, timestamp, stripe.secret) };
  return (await fetch(stripe.url, { method: 'POST', headers, body })).status;
}

/** A GitHub push, signed by `@octokit/webhooks-methods`; the status it is answered with. */
async function deliverGitHub(github: ReadyProvider): Promise<number> {
  const body = JSON.stringify({ ref: 'refs/heads/main', after: randomUUID(), repository: { full_name: 'octo/inbox' } });
  const headers = { 'content-type': 'application/json', ...(await githubHeaders(body, github.secret, 'push')) };
  return (await fetch(github.url, { method: 'POST', headers, body })).status;
}

test('a secret whose template names a KMS key is read only with kms:Decrypt on that key', async () => {
  const twin = await startTemplateTwinProcess({ app: outdir, port: 0, stateDir: join(dir, 'state') });
  try {
    const [inbox] = twin.ready.inboxes;
    const provider = (name: string) => inbox.providers.find((candidate) => candidate.name === name)!;
    expect(await deliverStripe(provider('stripe'))).toBe(202);
    expect(await deliverGitHub(provider('github'))).toBe(503);

    const iam = await twin.iam();
    expect(iam.enforced).toBe(true);
    const keyArn = expect.stringMatching(new RegExp(`^arn:aws:kms:${LOCAL_REGION}:${LOCAL_ACCOUNT}:key/[0-9a-f-]{36}$`));
    expect(iam.denials).toEqual([
      expect.objectContaining({ principal: `${STACK}/Inbox/VerifierRole`, operation: 'GetSecretValue', action: 'kms:Decrypt', resource: keyArn }),
    ]);
    expect(iam.denials[0].message).toContain('because no identity-based policy allows the kms:Decrypt action');
  } finally {
    await twin.stop();
  }
});
