/**
 * CloudFormation's own rules (aws-cdk-lib's CloudFormationValidatePlugin: resource schemas, and the
 * CDK's rules for what passes a schema but fails at deploy) find nothing in the templates the
 * construct synthesizes: its defaults, every preset with every optional part, and the REST API
 * ingress. aws-cdk-lib runs these rules on every synth unless told not to, and reports what they
 * find as warnings only; the test run turns that off (test/support/global-setup.mjs) and asserts
 * here, once, on the canonical templates, what it would only have printed.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { App, CloudFormationValidatePlugin, Duration, Stack, Validations } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { SignatureEncoding, WebhookInbox, WebhookInboxProps, WebhookIngress, WebhookProvider } from '../../lib';

const ENV = { account: '111111111111', region: 'eu-west-1' };
const WEB_ACL_ARN = 'arn:aws:wafv2:eu-west-1:111111111111:regional/webacl/hooks/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b';

interface Finding {
  readonly stack: string;
  readonly rule: string;
  readonly description: string;
}

/** What the plugin reports for each stack built by `configure`, from the validation report synth writes. */
function findings(configurations: Record<string, (stack: Stack) => WebhookInboxProps>): Finding[] {
  const app = new App();
  for (const [name, configure] of Object.entries(configurations)) {
    const stack = new Stack(app, name, { env: ENV });
    new WebhookInbox(stack, 'Inbox', configure(stack));
  }
  // Registered explicitly, it runs whatever CDK_VALIDATION says.
  Validations.of(app).addPlugins(new CloudFormationValidatePlugin());
  try {
    app.synth();
    const report = JSON.parse(readFileSync(join(app.outdir, 'validation-report.json'), 'utf8')) as {
      pluginReports: { pluginName: string; violations: { ruleName: string; description: string; violatingConstructs: { constructPath: string }[] }[] }[];
    };
    return report.pluginReports
      .filter((plugin) => plugin.pluginName === CloudFormationValidatePlugin.PLUGIN_NAME)
      .flatMap((plugin) =>
        plugin.violations.flatMap((violation) =>
          violation.violatingConstructs.map((construct) => ({ stack: construct.constructPath, rule: violation.ruleName, description: violation.description })),
        ),
      );
  } finally {
    rmSync(app.outdir, { recursive: true, force: true });
  }
}

test('CloudFormation validation finds nothing in the default inbox, one serving every preset with every option, and the REST API ingress', () => {
  const everything = (stack: Stack): WebhookInboxProps => {
    const apiKeySecret = new secretsmanager.Secret(stack, 'ApiKey');
    const handler = (id: string) =>
      new lambda.Function(stack, id, {
        runtime: lambda.Runtime.NODEJS_22_X,
        handler: 'index.handler',
        code: lambda.Code.fromInline('exports.handler = async () => ({});'),
      });
    return {
      providers: [
        WebhookProvider.answerline({ polling: { apiKeySecret, horizon: Duration.minutes(30) } }),
        WebhookProvider.echonova({ authoritativeRead: { urlTemplate: 'https://api.echonova.example/v1/results/{id}', idJsonPath: 'data.id', apiKeySecret } }),
        WebhookProvider.standardWebhooks({ name: 'openai', rotation: { registerFunction: handler('RegisterSecret') } }),
        WebhookProvider.stripe(),
        WebhookProvider.github(),
        WebhookProvider.meta(),
        WebhookProvider.slack(),
        WebhookProvider.zoom(),
        WebhookProvider.shopify(),
        WebhookProvider.paddle(),
        WebhookProvider.pagerduty(),
        WebhookProvider.linear(),
        WebhookProvider.discord(),
        WebhookProvider.square({ notificationUrl: 'https://hooks.example.com/hooks/square' }),
        WebhookProvider.twilio({ webhookUrl: 'https://hooks.example.com/hooks/twilio' }),
        WebhookProvider.sns({ topicArns: ['arn:aws:sns:eu-west-1:111111111111:orders'] }),
        WebhookProvider.messageBatches({ apiKeySecret }),
        WebhookProvider.hmac({ name: 'custom', signatureHeader: 'X-Signature', signatureEncoding: SignatureEncoding.BASE64, idJsonPath: 'id' }),
      ],
      processingFunction: handler('Processing'),
      publishEvents: true,
    };
  };
  expect(
    findings({
      Defaults: () => ({}),
      Everything: everything,
      RestApi: () => ({ ingress: WebhookIngress.restApi({ webAclArn: WEB_ACL_ARN }) }),
    }),
  ).toEqual([]);
});
