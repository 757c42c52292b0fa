/**
 * Flow control in the template (docs/FLOW-CONTROL.md): the circuit breaker's settings reach the
 * processor (on by default, off when asked), a rate reaches it with the concurrency that shares
 * it, the processor and the reconciler can read and change the flow-control item without a new
 * grant, and every setting out of range is refused at synth naming the prop.
 */
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { WebhookInbox, WebhookInboxProps } from '../../lib';
import { BreakerDefaults, Env } from '../../lib/contract';
import { handlerSettings } from '../support/handler-settings';

function build(props: WebhookInboxProps = {}): Stack {
  const stack = new Stack(new App(), 'Test', { env: { account: '111111111111', region: 'eu-west-1' } });
  new WebhookInbox(stack, 'Inbox', props);
  return stack;
}

const processorSettings = (props: WebhookInboxProps = {}) => handlerSettings(build(props), 'InboxProcessor');

describe('the circuit breaker', () => {
  test('is on by default, with the documented defaults', () => {
    expect(JSON.parse(processorSettings()[Env.BREAKER])).toEqual({
      failureThresholdPercent: 50,
      minimumRows: 10,
      windowSeconds: 60,
      coolDownSeconds: 60,
      probesToClose: 3,
    });
    expect(BreakerDefaults.coolDownSeconds).toBe(60);
  });

  test('takes the options given, durations in seconds', () => {
    const settings = processorSettings({
      circuitBreaker: { failureThresholdPercent: 80, minimumRows: 25, window: Duration.minutes(2), coolDown: Duration.seconds(30), probesToClose: 1 },
    });
    expect(JSON.parse(settings[Env.BREAKER])).toEqual({
      failureThresholdPercent: 80,
      minimumRows: 25,
      windowSeconds: 120,
      coolDownSeconds: 30,
      probesToClose: 1,
    });
  });

  test('is off with enabled: false: the processor gets no breaker settings', () => {
    expect(processorSettings({ circuitBreaker: { enabled: false } })[Env.BREAKER]).toBeUndefined();
  });

  test.each([
    [{ failureThresholdPercent: 0 }, /circuitBreaker\.failureThresholdPercent must be a whole number from 1 to 100, got 0/],
    [{ minimumRows: 0.5 }, /circuitBreaker\.minimumRows must be a whole number from 1 to 10000, got 0\.5/],
    [{ window: Duration.seconds(5) }, /circuitBreaker\.window \(seconds\) must be a whole number from 10 to 3600, got 5/],
    [{ coolDown: Duration.millis(1500) }, /circuitBreaker\.coolDown \(seconds\) must be a whole number from 1 to 3600, got 1\.5/],
    [{ probesToClose: 101 }, /circuitBreaker\.probesToClose must be a whole number from 1 to 100, got 101/],
  ])('refuses %p at synth, naming the prop', (circuitBreaker, message) => {
    expect(() => build({ circuitBreaker })).toThrow(message);
  });
});

describe('a rate for the consumer', () => {
  test('reaches the processor with the concurrency that shares it', () => {
    const settings = processorSettings({ processorMaxRowsPerSecond: 4, processorMaxConcurrency: 2 });
    expect(settings[Env.MAX_ROWS_PER_SECOND]).toBe('4');
    expect(settings[Env.MAX_CONCURRENCY]).toBe('2');
  });

  test('is absent by default: no cap beyond the concurrency', () => {
    const settings = processorSettings();
    expect(settings[Env.MAX_ROWS_PER_SECOND]).toBeUndefined();
    expect(settings[Env.MAX_CONCURRENCY]).toBeUndefined();
  });

  test('refuses a rate a batch cannot keep within the processor timeout, and one that is not positive', () => {
    // 10 rows × 5 invocations at 1 a second: each invocation must last 50 s, past the 30 s timeout.
    expect(() => build({ processorMaxRowsPerSecond: 1 })).toThrow(
      /processorMaxRowsPerSecond: a batch of 10 at concurrency 5 must last 50 s at 1 a second, not shorter than the processor's 30 s timeout/,
    );
    expect(() => build({ processorMaxRowsPerSecond: 1, processorFunctionProps: { timeout: Duration.seconds(60) } })).not.toThrow();
    expect(() => build({ processorMaxRowsPerSecond: 0 })).toThrow(/processorMaxRowsPerSecond: must be a positive number, got 0/);
  });
});

test('the processor and the reconciler read and update the flow-control item with the grants they already have', () => {
  const template = Template.fromStack(build());
  const policies = Object.values(template.findResources('AWS::IAM::Policy')) as any[];
  const actionsOf = (rolePrefix: string) =>
    policies
      .filter((policy) => policy.Properties.Roles.some((role: any) => String(role.Ref).startsWith(rolePrefix)))
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement)
      .flatMap((statement: any) => [statement.Action].flat());
  for (const role of ['InboxProcessor', 'InboxReconciler'])
    expect(actionsOf(role)).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:UpdateItem']));
  // Nothing of the event source mapping: the state is the table's, not the mapping's.
  expect(JSON.stringify(policies)).not.toContain('lambda:UpdateEventSourceMapping');
});
