/**
 * The command's options and usage, for both editions (src/cli.ts): a module that loads nothing of
 * the twin, so that the repository's `npm start` (scripts/start.ts) answers `--help` and a usage
 * error at once, before it bundles or loads anything.
 */
import { TWIN_PROVIDERS } from './twin/presets';
import type { StrictValues } from './twin/usage';

/** The options of both editions. */
export const OPTIONS = {
  app: { type: 'string' },
  stack: { type: 'string', multiple: true },
  port: { type: 'string', default: '3000' },
  secret: { type: 'string', multiple: true },
  'time-scale': { type: 'string', default: '1' },
  data: { type: 'string' },
  'api-gateway-cloudwatch-role': { type: 'string' },
  'runbook-base': { type: 'string' },
  help: { type: 'boolean', default: false },
} as const;

/** The options only the repository's edition has. */
export const REPOSITORY_OPTIONS = {
  provider: { type: 'string', multiple: true },
  providers: { type: 'string' },
  'no-demo': { type: 'boolean', default: false },
  once: { type: 'boolean', default: false },
} as const;

export type Options = StrictValues<typeof OPTIONS> & Partial<StrictValues<typeof REPOSITORY_OPTIONS>>;

const optionLines = (
  appDefault: string,
) => `  --app PATH         the cloud assembly (cdk.out, from npx cdk synth) or template file to run (default: ${appDefault})
  --stack NAME       only this stack of the assembly (repeatable; default: every stack)
  --port N           port of the first HTTP API (default 3000; 0 picks a free one)
  --secret NAME=VAL  this signing secret for the provider NAME (repeatable; default: generated)
  --time-scale X     run schedules X times faster than real time, queue visibility timeouts X times shorter (default 1)
  --data DIR         keep DynamoDB data in DIR across restarts
  --api-gateway-cloudwatch-role ARN  the account's API Gateway CloudWatch role (aws apigateway get-account), which a REST API stage needs to log (default: none, as in a new account)
  --runbook-base URL where the alarms' runbook links point, a URL or folder holding docs/RUNBOOK.md (default: the installed construct's folder)`;

export const PACKAGE_USAGE = `usage: webhook-inbox-local [--app cdk.out] [--stack NAME ...] [--port N] [--secret NAME=VALUE ...] [--time-scale X] [--data DIR] [--api-gateway-cloudwatch-role ARN] [--runbook-base URL]
${optionLines('cdk.out')}`;

export const repositoryUsage = () => `usage: npm start -- [--app PATH] [--stack NAME ...] [--port N] [--secret NAME=VALUE ...] [--time-scale X] [--data DIR]
                    [--api-gateway-cloudwatch-role ARN] [--runbook-base URL] [--provider NAME[=PRESET] ...] [--providers FILE] [--no-demo] [--once]
       npm run chaos -- [--help | chaos options]
${optionLines('synthesize bin/app.ts')}
  --provider NAME[=PRESET]
                     run the twin's own app with this provider instead (repeatable): a preset by its name, or
                     under another name (shop=stripe); presets: ${Object.keys(TWIN_PROVIDERS).join(', ')}
  --providers FILE   the same, from a JSON array: {"name", "preset"} entries, and {"name", "preset": "hmac",
                     "signatureHeader", ...} for the generic HMAC scheme (the options of WebhookProvider.hmac)
  --no-demo          only serve
  --once             exit after the demo`;
