/**
 * The rotation function against the Secrets Manager stand-in and a Lambda Invoke stand-in (for
 * the register function), through the real SDK clients; and the verifier during a rotation and
 * during the manual procedure for providers that generate the secret themselves.
 */
import { PutSecretValueCommand, RotateSecretCommand, UpdateSecretVersionStageCommand } from '@aws-sdk/client-secrets-manager';
import type { SecretsManagerRotationEvent } from 'aws-lambda';
import { AdapterKind, Defaults, DeliveryStatus, Env, MetricName, providerRuntimeConfig, RotatedSecretConfig } from '../../../lib/contract';
import { createRotator, isValidSecret, LambdaRegistrar, RotationError, rotatedSecretsFromEnv, SecretRegistration } from '../../../lambda/rotator/rotator';
import { decodeStandardWebhooksSecret } from '../../../lambda/shared/signatures/standard-webhooks';
import {
  answerlineBody,
  Clock,
  InboxHarness,
  INBOX_NAME,
  keyOf,
  LineCapture,
  newSigningSecret,
  PROVIDER,
  SecretsFixture,
  taskIdOf,
  uniqueName,
} from '../../support/inbox-fixture';
import { LambdaInvokeStandIn, resourceNames } from '#twin/testing';
import { BundleHost } from '../../support/bundle-host';
import { fixtureGateway, iamReady, InboxStructure, LocalInbox } from '../../support/iam-fixture';

const ROTATOR_ARN = 'arn:aws:lambda:us-east-1:000000000000:function:inbox-rotator';
const REGISTER_ARN = 'arn:aws:lambda:us-east-1:000000000000:function:register-answerline';
const TTL_MS = Defaults.SECRET_CACHE_SECONDS * 1000;
const MIN_REFRESH_MS = 30_000;

const clock = new Clock();
/** The stand-in stamps versions with the test clock, so the grace period runs on it too. */
const secrets = new SecretsFixture(clock.now);
const lambda = new LambdaInvokeStandIn();
let lambdaEndpoint: string;
/** What the provider's register function was given, in order. */
let registered: SecretRegistration[];

beforeAll(async () => {
  await secrets.start();
  lambdaEndpoint = await lambda.start();
  fixtureGateway().gateway.useUpstream('lambda', lambdaEndpoint);
  await iamReady();
});
afterAll(async () => {
  await lambda.stop();
  await secrets.stop();
});
beforeEach(() => {
  registered = [];
  lambda.deploy(REGISTER_ARN, (payload) => {
    registered.push(payload as SecretRegistration);
    return { registered: true };
  });
});

type Step = SecretsManagerRotationEvent['Step'];
type Rotator = ReturnType<typeof createRotator>;

/** A secret the rotator is configured for, and the rotator (its log lines captured). */
async function rotatedSecret(options: { format?: 'whsec' | 'text'; register?: boolean; value?: string } = {}) {
  const format = options.format ?? 'whsec';
  const created = await secrets.create(options.value ?? (format === 'whsec' ? newSigningSecret() : 'a'.repeat(64)));
  const arn = await secrets.arnOf(created.id);
  const config: RotatedSecretConfig = {
    secretId: arn,
    providerName: PROVIDER,
    format,
    ...(options.register === false ? {} : { registerFunctionArn: REGISTER_ARN }),
  };
  const capture = new LineCapture();
  const rotate = rotatorFor([config], capture);
  return { ...created, arn, config, capture, rotate };
}

/**
 * The rotator's own clients: its role in the template of an inbox whose providers' secrets are
 * `rotated` (the register function each names bound to that ARN), through the IAM gateway.
 */
function rotatorRole(rotated: RotatedSecretConfig[]): [structure: InboxStructure, local: LocalInbox] {
  const providers = rotated.map((config) =>
    providerRuntimeConfig({
      name: config.providerName,
      adapter: config.format === 'whsec' ? AdapterKind.ANSWERLINE : AdapterKind.GITHUB,
      secretId: config.secretId,
    }),
  );
  const registerFunctionArn = rotated.find((config) => config.registerFunctionArn)?.registerFunctionArn;
  const unused = resourceNames('rotator-only');
  return [
    { providers, rotation: { providers: providers.map((provider) => provider.name), registerFunction: registerFunctionArn !== undefined } },
    {
      inboxTable: unused.inboxTable,
      resultsTable: unused.resultsTable,
      workQueueUrl: unused.workQueue,
      deadLetterQueueUrl: unused.deadLetterQueue,
      registerFunctionArn,
    },
  ];
}

function rotatorFor(rotated: RotatedSecretConfig[], capture = new LineCapture()): Rotator {
  const clients = fixtureGateway().clientsAs('rotator', ...rotatorRole(rotated));
  return createRotator({
    secretsManager: clients.secretsManager,
    registrar: new LambdaRegistrar(clients.lambda),
    rotated,
    telemetry: capture.telemetry(clock.now),
  });
}

const event = (arn: string, token: string, step: Step): SecretsManagerRotationEvent => ({ SecretId: arn, ClientRequestToken: token, Step: step });

/** The outcomes the rotator logged, in order. */
const outcomes = (capture: LineCapture) => capture.logs('rotation').map((record) => `${String(record.step)}:${String(record.outcome)}`);

describe('rotatedSecretsFromEnv', () => {
  const env = (value: unknown) => ({ [Env.ROTATED_SECRETS]: JSON.stringify(value) });

  test('reads the secrets the construct serialized', () => {
    const rotated = [
      {
        secretId: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:answerline-AbCdEf',
        providerName: 'answerline',
        format: 'whsec',
        registerFunctionArn: REGISTER_ARN,
      },
      { secretId: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:github-GhIjKl', providerName: 'github', format: 'text' },
    ];
    expect(rotatedSecretsFromEnv(env(rotated))).toEqual(rotated);
  });

  test.each([
    ['unset', {}, Env.ROTATED_SECRETS],
    ['not JSON', { [Env.ROTATED_SECRETS]: '[{' }, 'not valid JSON'],
    ['empty', env([]), 'non-empty JSON array'],
    ['no secretId', env([{ providerName: 'p', format: 'whsec' }]), '[0].secretId'],
    ['no providerName', env([{ secretId: 's', format: 'whsec' }]), '[0].providerName'],
    ['an unknown format', env([{ secretId: 's', providerName: 'p', format: 'base64' }]), '[0].format'],
    ['an empty registerFunctionArn', env([{ secretId: 's', providerName: 'p', format: 'text', registerFunctionArn: '' }]), '[0].registerFunctionArn'],
  ])('refuses a configuration that is %s', (_name, environment, message) => {
    expect(() => rotatedSecretsFromEnv(environment)).toThrow(message);
  });
});

describe('the four steps, each run twice', () => {
  test('whsec with a register function: one new version, registered, tested, promoted; repeats change nothing', async () => {
    const s = await rotatedSecret();
    const oldVersion = (await secrets.stages(s.id)).AWSCURRENT;
    const token = await secrets.startRotation(s.id, ROTATOR_ARN);
    const run = (step: Step) => s.rotate(event(s.arn, token, step));

    await run('createSecret');
    const pending = await secrets.valueAt(s.id, 'AWSPENDING');
    await run('createSecret');
    expect(await secrets.valueAt(s.id, 'AWSPENDING')).toBe(pending);
    expect(pending).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(decodeStandardWebhooksSecret(pending)).toHaveLength(32);
    expect(await secrets.stages(s.id)).toEqual({ AWSCURRENT: oldVersion, AWSPENDING: token });

    await run('setSecret');
    await run('setSecret');
    const registration = { providerName: PROVIDER, secretId: s.arn, versionId: token, secret: pending };
    expect(registered).toEqual([registration, registration]);
    expect(lambda.invocations.filter((i) => i.functionName === REGISTER_ARN).at(-1)).toMatchObject({ invocationType: 'RequestResponse' });

    await run('testSecret');
    await run('testSecret');
    expect(await secrets.stages(s.id)).toEqual({ AWSCURRENT: oldVersion, AWSPENDING: token });
    expect(await secrets.valueAt(s.id, 'AWSCURRENT')).toBe(s.value);

    await run('finishSecret');
    const finished = { AWSCURRENT: token, AWSPREVIOUS: oldVersion };
    expect(await secrets.stages(s.id)).toEqual(finished);
    expect(await secrets.valueAt(s.id, 'AWSCURRENT')).toBe(pending);
    expect(await secrets.valueAt(s.id, 'AWSPREVIOUS')).toBe(s.value);
    await run('finishSecret');
    expect(await secrets.stages(s.id)).toEqual(finished);

    // Secrets Manager may repeat any step after the rotation completed: nothing happens.
    for (const step of ['createSecret', 'setSecret', 'testSecret', 'finishSecret'] as const) await run(step);
    expect(await secrets.stages(s.id)).toEqual(finished);
    expect(registered).toHaveLength(2);

    expect(outcomes(s.capture)).toEqual([
      'createSecret:created',
      'createSecret:exists',
      'setSecret:registered',
      'setSecret:registered',
      'testSecret:valid',
      'testSecret:valid',
      'finishSecret:promoted',
      'finishSecret:already-current',
      'createSecret:already-current',
      'setSecret:already-current',
      'testSecret:already-current',
      'finishSecret:already-current',
    ]);
    s.capture.expectNoLineContains([pending, s.value, pending.slice(6)]);
  });

  test('text without a register function: 64 random hex characters; setSecret has nothing to do', async () => {
    const s = await rotatedSecret({ format: 'text', register: false });
    const token = await secrets.startRotation(s.id, ROTATOR_ARN);

    for (const step of ['createSecret', 'createSecret', 'setSecret', 'setSecret', 'testSecret', 'testSecret', 'finishSecret', 'finishSecret'] as const) {
      await s.rotate(event(s.arn, token, step));
    }

    const value = await secrets.valueAt(s.id, 'AWSCURRENT');
    expect(value).toMatch(/^[0-9a-f]{64}$/);
    expect(value).not.toBe(s.value);
    expect((await secrets.stages(s.id)).AWSCURRENT).toBe(token);
    expect(registered).toEqual([]);
    expect(outcomes(s.capture).filter((o) => o.startsWith('setSecret'))).toEqual(['setSecret:no-register-function', 'setSecret:no-register-function']);
  });

  test('two rotations in a row make two distinct secrets; AWSPREVIOUS follows AWSCURRENT', async () => {
    const s = await rotatedSecret({ register: false });
    const values = [s.value];
    for (let rotation = 0; rotation < 2; rotation++) {
      const token = await secrets.startRotation(s.id, ROTATOR_ARN);
      for (const step of ['createSecret', 'setSecret', 'testSecret', 'finishSecret'] as const) await s.rotate(event(s.arn, token, step));
      values.push(await secrets.valueAt(s.id, 'AWSCURRENT'));
    }
    expect(new Set(values).size).toBe(3);
    expect(await secrets.valueAt(s.id, 'AWSPREVIOUS')).toBe(values[1]);
  });

  test('a finishSecret interrupted between its two label moves completes when repeated', async () => {
    const s = await rotatedSecret({ register: false });
    const oldVersion = (await secrets.stages(s.id)).AWSCURRENT;
    const token = await secrets.startRotation(s.id, ROTATOR_ARN);
    for (const step of ['createSecret', 'setSecret', 'testSecret'] as const) await s.rotate(event(s.arn, token, step));
    // The first move of finishSecret went through, then the function died.
    await secrets.client.send(
      new UpdateSecretVersionStageCommand({ SecretId: s.arn, VersionStage: 'AWSCURRENT', MoveToVersionId: token, RemoveFromVersionId: oldVersion }),
    );
    expect(await secrets.stages(s.id)).toEqual({ AWSCURRENT: token, AWSPENDING: token, AWSPREVIOUS: oldVersion });

    await s.rotate(event(s.arn, token, 'finishSecret'));
    await s.rotate(event(s.arn, token, 'finishSecret'));

    expect(await secrets.stages(s.id)).toEqual({ AWSCURRENT: token, AWSPREVIOUS: oldVersion });
    expect(outcomes(s.capture).slice(-2)).toEqual(['finishSecret:pending-removed', 'finishSecret:already-current']);
  });
});

describe('refusals: nothing changes', () => {
  test('a secret the function is not configured for', async () => {
    const s = await rotatedSecret();
    const other = await secrets.create();
    const token = await secrets.startRotation(other.id, ROTATOR_ARN);
    const before = await secrets.stages(other.id);

    await expect(s.rotate(event(await secrets.arnOf(other.id), token, 'createSecret'))).rejects.toThrow('not one this function rotates');
    expect(await secrets.stages(other.id)).toEqual(before);
    expect(s.capture.logs('rotation')[0]).toMatchObject({ level: 'ERROR', outcome: 'failed', error: 'RotationError' });
  });

  test('the secret is known by its full ARN, its partial ARN (no random suffix) or its name', async () => {
    for (const known of ['full', 'partial', 'name'] as const) {
      const s = await rotatedSecret({ register: false });
      const secretId = known === 'full' ? s.arn : known === 'partial' ? s.arn.slice(0, -7) : s.id;
      const rotate = rotatorFor([{ ...s.config, secretId }]);
      const token = await secrets.startRotation(s.id, ROTATOR_ARN);
      await rotate(event(s.arn, token, 'createSecret'));
      expect(await secrets.valueAt(s.id, 'AWSPENDING')).toMatch(/^whsec_/);
    }
  });

  test('rotation not enabled, an unknown token, a token not staged AWSPENDING, an unknown step', async () => {
    const s = await rotatedSecret();
    // Staged by hand, without RotateSecret: rotation is not enabled for the secret.
    const staged = await secrets.client.send(new PutSecretValueCommand({ SecretId: s.arn, SecretString: newSigningSecret(), VersionStages: ['AWSPENDING'] }));
    await expect(s.rotate(event(s.arn, staged.VersionId!, 'finishSecret'))).rejects.toThrow('rotation is not enabled');
    await secrets.client.send(new UpdateSecretVersionStageCommand({ SecretId: s.arn, VersionStage: 'AWSPENDING', RemoveFromVersionId: staged.VersionId }));

    const token = await secrets.startRotation(s.id, ROTATOR_ARN);
    const stages = await secrets.stages(s.id);
    await expect(s.rotate(event(s.arn, '00000000-0000-4000-8000-000000000000', 'createSecret'))).rejects.toThrow('has no stage for rotation');
    await expect(s.rotate(event(s.arn, staged.VersionId!, 'createSecret'))).rejects.toThrow('has no stage for rotation');
    await s.rotate(event(s.arn, token, 'createSecret'));
    await s.rotate(event(s.arn, token, 'setSecret'));
    await s.rotate(event(s.arn, token, 'finishSecret'));
    // The old version is AWSPREVIOUS now: it is not a rotation's pending version.
    await expect(s.rotate(event(s.arn, stages.AWSCURRENT, 'finishSecret'))).rejects.toThrow('is not staged AWSPENDING');
    await expect(s.rotate(event(s.arn, token, 'rollback' as Step))).rejects.toThrow('unknown rotation step');
    expect(await secrets.stages(s.id)).toEqual({ AWSCURRENT: token, AWSPREVIOUS: stages.AWSCURRENT });
  });

  test('testSecret refuses a pending value that is no secret of the format, and the rotation stops there', async () => {
    const s = await rotatedSecret();
    const token = await secrets.startRotation(s.id, ROTATOR_ARN);
    // Someone filled the rotation's version by hand with a value that is no whsec secret.
    await secrets.client.send(
      new PutSecretValueCommand({ SecretId: s.arn, ClientRequestToken: token, SecretString: 'not-a-whsec-secret-at-all', VersionStages: ['AWSPENDING'] }),
    );

    await s.rotate(event(s.arn, token, 'createSecret'));
    await expect(s.rotate(event(s.arn, token, 'testSecret'))).rejects.toThrow('the pending value is not a valid whsec secret');
    expect(await secrets.valueAt(s.id, 'AWSCURRENT')).toBe(s.value);
  });

  test.each([
    ['whsec', 'whsec_' + Buffer.alloc(32, 7).toString('base64'), true],
    ['whsec', 'whsec_' + Buffer.alloc(16, 7).toString('base64'), false],
    ['whsec', Buffer.alloc(32, 7).toString('base64'), false],
    ['whsec', 'whsec_%%%', false],
    ['text', 'ab'.repeat(32), true],
    ['text', 'AB'.repeat(32), false],
    ['text', 'ab'.repeat(31), false],
  ] as const)('isValidSecret(%s, %s) is %s', (format, value, valid) => {
    expect(isValidSecret(format, value)).toBe(valid);
  });
});

describe('Secrets Manager drives the rotation', () => {
  /** A rotation function ARN of this test alone, so no other test's RotateSecret runs it. */
  let drivenArn: string;
  /** What Secrets Manager reported on the default bus, in order. */
  const serviceEvents: { source: string; detailType: string; detail: Record<string, any> }[] = [];
  beforeAll(() => secrets.standIn.onServiceEvent((reported) => serviceEvents.push(reported)));
  beforeEach(() => {
    drivenArn = `${ROTATOR_ARN}-${uniqueName('driven')}`;
  });
  test('RotateSecret runs the four steps: the new secret is registered once, then current; the old one previous', async () => {
    const s = await rotatedSecret();
    const oldVersion = (await secrets.stages(s.id)).AWSCURRENT;
    secrets.standIn.attachRotationFunction(drivenArn, s.rotate);

    const token = await secrets.startRotation(s.id, drivenArn);
    const outcome = (await secrets.standIn.rotationsSettled()).find((o) => o.token === token);

    expect(outcome).toEqual({ secretArn: s.arn, token });
    expect(await secrets.stages(s.id)).toEqual({ AWSCURRENT: token, AWSPREVIOUS: oldVersion });
    const current = await secrets.valueAt(s.id, 'AWSCURRENT');
    expect(registered).toEqual([{ providerName: PROVIDER, secretId: s.arn, versionId: token, secret: current }]);
  });

  test('a register function that fails stops the rotation before promotion; once it works, the retried rotation completes', async () => {
    const s = await rotatedSecret();
    const oldVersion = (await secrets.stages(s.id)).AWSCURRENT;
    let refuse = true;
    lambda.deploy(REGISTER_ARN, (payload) => {
      const registration = payload as SecretRegistration;
      // An error message that echoes the secret must not reach the rotator's logs.
      if (refuse) throw Object.assign(new Error(`provider refused ${registration.secret}`), { name: 'ProviderRefused' });
      registered.push(registration);
      return {};
    });
    secrets.standIn.attachRotationFunction(drivenArn, s.rotate);

    const token = await secrets.startRotation(s.id, drivenArn);
    const outcome = (await secrets.standIn.rotationsSettled()).find((o) => o.token === token)!;

    expect(outcome.failedStep).toBe('setSecret');
    expect(outcome.error).toBeInstanceOf(RotationError);
    // Secrets Manager reports it on the default bus: the inbox's rotation-failure rule matches this.
    expect(serviceEvents.filter((reported) => reported.detail.additionalEventData.SecretId === s.arn)).toEqual([
      {
        source: 'aws.secretsmanager',
        detailType: 'AWS Service Event via CloudTrail',
        detail: expect.objectContaining({
          eventSource: 'secretsmanager.amazonaws.com',
          eventName: 'RotationFailed',
          errorMessage: `Error when executing lambda ${drivenArn} during setSecret step`,
        }),
      },
    ]);
    expect((outcome.error as Error).message).toBe('the register function failed (Unhandled: ProviderRefused)');
    expect(await secrets.stages(s.id)).toEqual({ AWSCURRENT: oldVersion, AWSPENDING: token });
    expect(await secrets.valueAt(s.id, 'AWSCURRENT')).toBe(s.value);
    const pending = await secrets.valueAt(s.id, 'AWSPENDING');
    s.capture.expectNoLineContains([pending, s.value]);
    expect(s.capture.logs('rotation').at(-1)).toMatchObject({
      step: 'setSecret',
      outcome: 'failed',
      detail: 'the register function failed (Unhandled: ProviderRefused)',
    });

    // Secrets Manager refuses a new rotation while this one is incomplete, and retries it with the same token.
    await expect(secrets.startRotation(s.id, drivenArn)).rejects.toThrow("A previous rotation isn't complete");
    refuse = false;
    for (const step of ['createSecret', 'setSecret', 'testSecret', 'finishSecret'] as const) await s.rotate(event(s.arn, token, step));

    expect(await secrets.stages(s.id)).toEqual({ AWSCURRENT: token, AWSPREVIOUS: oldVersion });
    expect(await secrets.valueAt(s.id, 'AWSCURRENT')).toBe(pending);
    expect(registered).toEqual([{ providerName: PROVIDER, secretId: s.arn, versionId: token, secret: pending }]);
  });

  test('a deploy that does not rotate (RotateImmediately false) only tests the function, on a copy of the current value: even a placeholder passes, nothing changes', async () => {
    // What the deploy left: a generated placeholder, in no signing secret's format.
    const s = await rotatedSecret({ value: 'Kq3LwTz8NpR2vXc6YhJ9mB4sDf7Gk1QaWe5Ut0Io2PzXc8Vb' });
    const before = await secrets.stages(s.id);
    secrets.standIn.attachRotationFunction(drivenArn, s.rotate);

    await secrets.client.send(new RotateSecretCommand({ SecretId: s.id, RotationLambdaARN: drivenArn, RotateImmediately: false }));
    const [outcome] = (await secrets.standIn.rotationsSettled()).filter((o) => o.secretArn === s.arn);

    expect(outcome).toEqual({ secretArn: s.arn, token: expect.any(String), testOnly: true });
    expect(outcomes(s.capture)).toEqual(['testSecret:configuration-tested']);
    expect(await secrets.stages(s.id)).toEqual(before);
    expect(await secrets.valueAt(s.id, 'AWSCURRENT')).toBe(s.value);
    expect(registered).toEqual([]);
    expect(serviceEvents.filter((reported) => reported.detail.additionalEventData.SecretId === s.arn)).toEqual([]);
  });

  test('a register function that does not exist fails setSecret the same way', async () => {
    const s = await rotatedSecret();
    const rotate = rotatorFor([{ ...s.config, registerFunctionArn: `${REGISTER_ARN}-missing` }]);
    const token = await secrets.startRotation(s.id, ROTATOR_ARN);
    await rotate(event(s.arn, token, 'createSecret'));

    await expect(rotate(event(s.arn, token, 'setSecret'))).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
    expect((await secrets.stages(s.id)).AWSPENDING).toBe(token);
    expect(await secrets.valueAt(s.id, 'AWSCURRENT')).toBe(s.value);
  });
});

describe('the verifier during a rotation', () => {
  let h: InboxHarness;
  beforeEach(async () => {
    clock.set(Date.now());
    h = await InboxHarness.create(secrets, 'rotation', { clock });
  });
  afterEach(() => {
    h.expectLogsClean();
    h.destroy();
  });

  // A delivery line names the stage that verified by the metric it carries, one per stage.
  const stageOf: Record<string, string> = { MatchedCurrentSecret: 'AWSCURRENT', MatchedPendingSecret: 'AWSPENDING', MatchedPreviousSecret: 'AWSPREVIOUS' };
  const signedWith = () =>
    h.capture.logs('delivery').map((record) => {
      const metric = Object.keys(stageOf).find((name) => record[name] === 1);
      return `${String(record.reason)}:${metric === undefined ? '-' : stageOf[metric]}`;
    });

  test('old and new secret are both accepted: new as AWSPENDING, then old as AWSPREVIOUS until the grace ends', async () => {
    const GRACE_S = 3_600;
    const verifier = h.verifier({ providers: [{ ...h.providerConfig(), previousSecretGraceSeconds: GRACE_S }] });
    const arn = await secrets.arnOf(h.secret.id);
    const rotate = rotatorFor([{ secretId: arn, providerName: PROVIDER, format: 'whsec', registerFunctionArn: REGISTER_ARN }]);
    const old = h.secret.value;
    const deliver = (secret: string) => h.deliver(answerlineBody(), verifier, { secret });

    expect(await deliver(old)).toEqual({ statusCode: 202, result: 'accepted' });

    const rotationStartedAt = clock.now();
    const token = await secrets.startRotation(h.secret.id, ROTATOR_ARN);
    for (const step of ['createSecret', 'setSecret', 'testSecret'] as const) await rotate(event(arn, token, step));
    const next = registered[0].secret;
    h.markSensitive(next);

    // The provider has the new secret and signs with either. A miss re-reads (rate-limited): the pending version verifies.
    clock.advance(MIN_REFRESH_MS);
    expect(await deliver(next)).toEqual({ statusCode: 202, result: 'accepted' });
    expect(await deliver(old)).toEqual({ statusCode: 202, result: 'accepted' });

    await rotate(event(arn, token, 'finishSecret'));
    // Until the cache is read again the verifier still knows the new secret as pending: both verify.
    expect(await deliver(next)).toEqual({ statusCode: 202, result: 'accepted' });
    clock.advance(TTL_MS);
    expect(await deliver(next)).toEqual({ statusCode: 202, result: 'accepted' });
    expect(await deliver(old)).toEqual({ statusCode: 202, result: 'accepted' });

    // The last instant of the grace, counted from the creation of the new current version.
    clock.set(rotationStartedAt + GRACE_S * 1000);
    expect(await deliver(old)).toEqual({ statusCode: 202, result: 'accepted' });
    clock.advance(1);
    expect(await deliver(old)).toMatchObject({ statusCode: 400, result: 'bad_signature' });
    clock.advance(MIN_REFRESH_MS);
    expect(await deliver(old)).toMatchObject({ statusCode: 400, result: 'bad_signature' });
    expect(await deliver(next)).toEqual({ statusCode: 202, result: 'accepted' });

    expect(signedWith()).toEqual([
      'accepted:AWSCURRENT',
      'accepted:AWSPENDING',
      'accepted:AWSCURRENT',
      'accepted:AWSPENDING',
      'accepted:AWSCURRENT',
      'accepted:AWSPREVIOUS',
      'accepted:AWSPREVIOUS',
      'bad_signature:-',
      'bad_signature:-',
      'accepted:AWSCURRENT',
    ]);
    expect(h.capture.metric(MetricName.MATCHED_CURRENT_SECRET, PROVIDER)).toBe(4);
    expect(h.capture.metric(MetricName.MATCHED_PENDING_SECRET, PROVIDER)).toBe(2);
    expect(h.capture.metric(MetricName.MATCHED_PREVIOUS_SECRET, PROVIDER)).toBe(2);
    expect(h.capture.metric(MetricName.BAD_SIGNATURE, PROVIDER)).toBe(2);
    expect(await h.inboxItems()).toHaveLength(8);
  });

  test('the default grace keeps AWSPREVIOUS for a day after the rotation', async () => {
    const verifier = h.verifier();
    const arn = await secrets.arnOf(h.secret.id);
    const rotate = rotatorFor([{ secretId: arn, providerName: PROVIDER, format: 'whsec' }]);
    const rotationStartedAt = clock.now();
    const token = await secrets.startRotation(h.secret.id, ROTATOR_ARN);
    for (const step of ['createSecret', 'setSecret', 'testSecret', 'finishSecret'] as const) await rotate(event(arn, token, step));

    clock.set(rotationStartedAt + Defaults.PREVIOUS_SECRET_GRACE_SECONDS * 1000);
    expect(await h.deliver(answerlineBody(), verifier)).toEqual({ statusCode: 202, result: 'accepted' });
    clock.advance(1);
    expect(await h.deliver(answerlineBody(), verifier)).toMatchObject({ statusCode: 400, result: 'bad_signature' });
    expect(signedWith()).toEqual(['accepted:AWSPREVIOUS', 'bad_signature:-']);
  });
});

describe('the manual procedure, for providers that generate the secret themselves', () => {
  let h: InboxHarness;
  beforeEach(async () => {
    clock.set(Date.now());
    h = await InboxHarness.create(secrets, 'manual', { clock });
  });
  afterEach(() => {
    h.expectLogsClean();
    h.destroy();
  });

  /** The operator's three commands, through the SDK (docs/ROTATION.md). */
  const operator = {
    stage: (secret: string) => secrets.client.send(new PutSecretValueCommand({ SecretId: h.secret.id, SecretString: secret, VersionStages: ['AWSPENDING'] })),
    promote: (newVersion: string, oldVersion: string) =>
      secrets.client.send(
        new UpdateSecretVersionStageCommand({
          SecretId: h.secret.id,
          VersionStage: 'AWSCURRENT',
          MoveToVersionId: newVersion,
          RemoveFromVersionId: oldVersion,
        }),
      ),
    cleanUp: (newVersion: string) =>
      secrets.client.send(new UpdateSecretVersionStageCommand({ SecretId: h.secret.id, VersionStage: 'AWSPENDING', RemoveFromVersionId: newVersion })),
  };

  test('stage AWSPENDING, promote, clean up: both secrets accepted throughout by warm and cold verifiers, nothing lost', async () => {
    const old = h.secret.value;
    const next = newSigningSecret();
    h.markSensitive(next);
    // One container that read the secret before the rotation, and a cold start for each batch.
    const warm = h.verifier();
    const sent: string[] = [];
    const deliverBoth = async () => {
      for (const verifier of [warm, h.verifier()]) {
        for (const secret of [old, next]) {
          const body = answerlineBody();
          sent.push(taskIdOf(body));
          expect(await h.deliver(body, verifier, { secret })).toEqual({ statusCode: 202, result: 'accepted' });
        }
      }
    };
    const first = answerlineBody();
    sent.push(taskIdOf(first));
    expect(await h.deliver(first, warm)).toEqual({ statusCode: 202, result: 'accepted' });
    const oldVersion = (await secrets.stages(h.secret.id)).AWSCURRENT;

    // 1. Stage the provider's new secret; let verifiers read it (at most the cache TTL) before it signs alone.
    const stagedAt = clock.now();
    const staged = await operator.stage(next);
    clock.advance(TTL_MS);
    await deliverBoth();
    // 2. Promote it: the old one becomes AWSPREVIOUS. Warm caches still hold the pre-promotion view.
    await operator.promote(staged.VersionId!, oldVersion);
    await deliverBoth();
    clock.advance(TTL_MS);
    await deliverBoth();
    // 3. Take AWSPENDING off the new version.
    await operator.cleanUp(staged.VersionId!);
    await deliverBoth();
    expect(await secrets.stages(h.secret.id)).toEqual({ AWSCURRENT: staged.VersionId, AWSPREVIOUS: oldVersion });

    // Every delivery stored exactly once, and one message queued for each.
    // A row's key is `<provider>#<eventId>`.
    const stored = (await h.inboxItems()).map((item) => String(item.pk).slice(`${PROVIDER}#`.length));
    expect(stored.sort()).toEqual([...sent].sort());
    expect(await h.takeMessages()).toHaveLength(sent.length);
    // Before promotion the new secret matched as pending; after, as current (never twice for one version).
    expect(h.capture.metric(MetricName.MATCHED_PENDING_SECRET, PROVIDER)).toBe(2 + 1);
    expect(h.capture.metric(MetricName.MATCHED_PREVIOUS_SECRET, PROVIDER)).toBe(5);
    expect(h.capture.metric(MetricName.MATCHED_CURRENT_SECRET, PROVIDER)).toBe(sent.length - 3 - 5);
    expect(h.capture.metric(MetricName.BAD_SIGNATURE)).toBe(0);

    // After the grace, counted from staging, only the new secret.
    clock.set(stagedAt + Defaults.PREVIOUS_SECRET_GRACE_SECONDS * 1000 + 1);
    const late = h.verifier();
    expect(await h.deliver(answerlineBody(), late, { secret: old })).toMatchObject({ statusCode: 400, result: 'bad_signature' });
    expect(await h.deliver(answerlineBody(), late, { secret: next })).toEqual({ statusCode: 202, result: 'accepted' });
  });

  test('a provider that signs with its new secret at once: its first delivery verifies, although the verifier read the secret a second before', async () => {
    const old = h.secret.value;
    const next = newSigningSecret();
    h.markSensitive(next);
    const warm = h.verifier();
    expect(await h.deliver(answerlineBody(), warm, { secret: old })).toEqual({ statusCode: 202, result: 'accepted' });

    // The provider rolled its secret and signs only with the new one; the operator stages it a moment later.
    clock.advance(1_000);
    const staged = await operator.stage(next);
    const body = answerlineBody();
    // The provider's schedule (docs/providers/answerline.md): every non-2xx is retried, 5 s doubling.
    const answers: number[] = [];
    for (let attempt = 0, wait = 5_000; attempt < 10; attempt++, wait *= 2) {
      const answer = await h.deliver(body, warm, { secret: next });
      answers.push(answer.statusCode);
      if (answer.statusCode < 300) break;
      clock.advance(wait);
    }

    // The warm cache's last read was for its TTL, not one a miss forced: the miss reads the staged secret at once.
    expect(answers).toEqual([202]);
    expect(await h.row(keyOf(body))).toMatchObject({ pk: `${PROVIDER}#${taskIdOf(body)}`, status: DeliveryStatus.RECEIVED });
    const oldVersion = (await secrets.stages(h.secret.id)).AWSCURRENT;
    await operator.promote(staged.VersionId!, oldVersion);
    await operator.cleanUp(staged.VersionId!);
    expect(await h.deliver(answerlineBody(), h.verifier(), { secret: next })).toEqual({ statusCode: 202, result: 'accepted' });
  });
});

describe('the shipped bundle', () => {
  test('rotates a secret configured only through the environment, with the SDKs bundled inside it', async () => {
    const s = await rotatedSecret();
    const oldVersion = (await secrets.stages(s.id)).AWSCURRENT;
    const env = {
      ...fixtureGateway().environmentAs('rotator', ...rotatorRole([s.config])),
      [Env.INBOX_NAME]: INBOX_NAME,
      [Env.ROTATED_SECRETS]: JSON.stringify([s.config]),
    };
    const bundles = new BundleHost();
    const stdout = bundles.lines;
    try {
      const handler = bundles.handler<Rotator>('rotator', env);
      const token = await secrets.startRotation(s.id, ROTATOR_ARN);
      for (const step of ['createSecret', 'setSecret', 'testSecret', 'finishSecret'] as const) await handler!(event(s.arn, token, step));

      expect(await secrets.stages(s.id)).toEqual({ AWSCURRENT: token, AWSPREVIOUS: oldVersion });
      const current = await secrets.valueAt(s.id, 'AWSCURRENT');
      expect(registered).toEqual([{ providerName: PROVIDER, secretId: s.arn, versionId: token, secret: current }]);
      const logged = stdout.map((line) => JSON.parse(line) as Record<string, unknown>).filter((record) => record.message === 'rotation');
      expect(logged.map((record) => record.outcome)).toEqual(['created', 'registered', 'valid', 'promoted']);
      expect(stdout.filter((line) => line.includes(current) || line.includes(s.value))).toEqual([]);
    } finally {
      await bundles.stop();
    }
  });
});
