#!/usr/bin/env node
/**
 * The example app: one stack with a WebhookInbox receiving Answerline and Echonova results,
 * checked by cdk-nag's AwsSolutions rules. `npx cdk synth` runs offline, with no AWS
 * credentials; `npm start` runs its synthesized template locally.
 */
import { App, Stack, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { WebhookInbox, WebhookProvider } from '../lib';

const app = new App();
const stack = new Stack(app, 'WebhookInboxExample', {
  description: 'cdk-webhook-inbox example: receives Answerline and Echonova results',
});
const inbox = new WebhookInbox(stack, 'Answers', { providers: [WebhookProvider.answerline(), WebhookProvider.echonova()] });

// Applications read results through a grant, like any aws-cdk-lib resource.
void inbox;

Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
app.synth();
