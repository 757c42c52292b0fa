#!/usr/bin/env node
/**
 * The example app: one stack with a WebhookInbox receiving Answerline and Echonova results,
 * checked by cdk-nag's AwsSolutions rules. `npx cdk synth` runs offline, with no AWS
 * credentials; `npm start` runs its synthesized template locally.
 */
import { App, Stack, Validations } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { AwsSolutionsChecks } from 'cdk-nag';
import { WebhookInbox, WebhookProvider } from '../lib';

const app = new App();
const stack = new Stack(app, 'WebhookInboxExample', {
  description: 'cdk-webhook-inbox example: receives Answerline and Echonova results',
});

/**
 * The app's own processing of each result. It refuses the jobs whose key starts with
 * `drill-dead-`, so the runbook's dead-delivery drill has a delivery that fails every attempt
 * (docs/RUNBOOK.md#drills-in-the-local-twin).
 */
const processResult = new lambda.Function(stack, 'ProcessResult', {
  runtime: lambda.Runtime.NODEJS_24_X,
  handler: 'index.handler',
  code: lambda.Code.fromInline(`
exports.handler = async (event) => {
  const jobKey = String((event.detail && event.detail.jobKey) || '');
  if (jobKey.startsWith('drill-dead-')) throw new Error('cannot handle job ' + jobKey + ' (the dead-delivery drill)');
  console.log(JSON.stringify({ processed: event['detail-type'], effectKey: event.detail && event.detail.effectKey }));
};
`),
});

// Your own findings are yours to acknowledge, at resource level, with the evidence.
Validations.of(processResult.role!).acknowledge({
  id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
  reason: 'The example processing function only writes its own logs, which is all AWSLambdaBasicExecutionRole allows',
});

new WebhookInbox(stack, 'Answers', {
  providers: [WebhookProvider.answerline(), WebhookProvider.echonova()],
  processingFunction: processResult,
  // Results also go to the inbox's bus, for rules (inbox.onJobResult).
  publishEvents: true,
});

Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
app.synth();
