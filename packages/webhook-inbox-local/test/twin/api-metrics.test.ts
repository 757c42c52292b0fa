/**
 * The twin's API Gateway metrics, as the template's alarms read them. What CloudWatch receives from
 * API Gateway, stated here: an HTTP API's `Count`, `4xx` and `5xx` by `ApiId`; a REST API's `Count`,
 * `4XXError` and `5XXError` by `ApiName`, and by `ApiName` and `Stage` (a REST API's metrics carry
 * no id). Two REST inboxes of one stack: 5xx answers of one raise its own verifier alarm only.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { WebhookInbox, WebhookIngress } from '../../../../lib';
import { AlarmEvaluator, AlarmResource } from '../../src/aws/cloudwatch/evaluator';
import { pseudoParameters, resolveIntrinsics, TemplateBinding } from '../../src/aws/cloudformation/intrinsics';
import type { LocalApi } from '../../src/aws/cloudformation/triggers';
import { TwinMonitor } from '../../src/twin/monitor';
import { ACCOUNT_ALARM_ARN, ManualClock, MINUTE, T0 } from '../aws/cloudwatch/support';

const stack = new Stack(new App(), 'Payments');
const inboxes = [
  new WebhookInbox(stack, 'Inbox', { ingress: WebhookIngress.restApi() }),
  new WebhookInbox(stack, 'Other', { ingress: WebhookIngress.restApi() }),
];
const resources = Template.fromStack(stack).toJSON().Resources as Record<string, { Type: string; Properties: Record<string, any> }>;
const binding: TemplateBinding = {
  resources: {},
  pseudo: pseudoParameters('000000000000', 'us-east-1', stack.stackName),
  // A stage's Ref is its name; an alarm's name is its logical id here.
  fallback: (logicalId, attribute) =>
    resources[logicalId]?.Type === 'AWS::ApiGateway::Stage' && attribute === undefined ? resources[logicalId].Properties.StageName : logicalId,
};
/** Each inbox's verifier alarm, resolved as the twin resolves it, and its REST API as the twin runs it. */
const watched = inboxes.map((inbox) => {
  const logicalId = stack.getLogicalId(inbox.alarms.verifierServerErrors!.node.defaultChild as any);
  const alarm: AlarmResource = {
    stackName: stack.stackName,
    logicalId,
    name: logicalId,
    arn: `${ACCOUNT_ALARM_ARN}${logicalId}`,
    type: 'AWS::CloudWatch::Alarm',
    properties: resolveIntrinsics(resources[logicalId].Properties, binding) as Record<string, unknown>,
  };
  const apiId = stack.getLogicalId(inbox.restApi!.node.defaultChild as any);
  const api: LocalApi = {
    logicalId: apiId,
    apiId: `${apiId.toLowerCase()}`,
    url: '',
    restStage: { apiName: resources[apiId].Properties.Name, stageName: 'prod' },
  };
  return { alarm, api };
});

let dir: string;
beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'api-metrics-'))));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('5xx answers of one REST inbox raise its verifier alarm only; the other inbox’s stays OK', () => {
  const clock = new ManualClock();
  const monitor = new TwinMonitor({
    clock: { scale: 1, now: clock.read, at: (ms) => ms, realDelayUntil: (at) => at - clock.read() },
    notificationsLog: join(dir, 'notifications.log'),
    log: () => undefined,
  });
  const evaluator = new AlarmEvaluator(
    watched.map(({ alarm }) => alarm),
    { store: monitor.store, clock: clock.read },
  );
  const [failing, healthy] = watched;
  for (let i = 0; i < 5; i++) {
    monitor.onApiResponse(failing.api, { method: 'POST', path: '/hooks/answerline', status: 502, responseBody: '', requestId: `r${i}`, at: T0 + MINUTE });
    monitor.onApiResponse(healthy.api, { method: 'POST', path: '/hooks/answerline', status: 202, responseBody: '', requestId: `h${i}`, at: T0 + MINUTE });
  }
  clock.set(T0 + 10 * MINUTE);
  evaluator.evaluate();
  const states = Object.fromEntries(evaluator.states().map((status) => [status.logicalId, status.state]));
  expect(states).toEqual({ [failing.alarm.logicalId]: 'ALARM', [healthy.alarm.logicalId]: 'OK' });
});
