/**
 * `webhook-inbox-local`: runs a consumer's synthesized app (its `cdk.out`) on 127.0.0.1 with the
 * local twin, prints the twin's ready line (one JSON line on stdout) and serves until interrupted;
 * then one JSON line with what the IAM gateway judged. A refused AWS call is reported on stderr
 * as it happens. Usage errors answer one line and exit 2.
 */
import { existsSync } from 'node:fs';
import { hideSdkNodeVersionWarning } from '../../../lambda/shared/runtime/node-warnings';
import { AssemblyError } from './aws/cloudformation/assembly';
import { readyLine, startTemplateTwin, TemplateTwin } from './twin/twin';
import { assertPortFree, lockDataDir, parseCommandLine, portOption, runMain, secretOptions, timeScaleOption, UsageError } from './twin/usage';

const USAGE = `usage: webhook-inbox-local [--app cdk.out] [--stack NAME ...] [--port N] [--secret NAME=VALUE ...] [--time-scale X] [--data DIR]
  --app PATH         the cloud assembly (cdk.out, from npx cdk synth) or template file to run (default: cdk.out)
  --stack NAME       only this stack of the assembly (repeatable; default: every stack)
  --port N           port of the first HTTP API (default 3000; 0 picks a free one)
  --secret NAME=VAL  this signing secret for the provider NAME (repeatable; default: generated)
  --time-scale X     run schedules X times faster than real time (default 1)
  --data DIR         keep DynamoDB data in DIR across restarts`;

hideSdkNodeVersionWarning();

async function main(): Promise<number | void> {
  const args = parseCommandLine(
    {
      app: { type: 'string', default: 'cdk.out' },
      stack: { type: 'string', multiple: true },
      port: { type: 'string', default: '3000' },
      secret: { type: 'string', multiple: true },
      'time-scale': { type: 'string', default: '1' },
      data: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
    USAGE,
  );
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  const port = portOption(args.port, USAGE);
  const secrets = secretOptions(args.secret, USAGE);
  const timeScale = timeScaleOption(args['time-scale'], USAGE);
  if (!existsSync(args.app)) throw new UsageError(`--app ${args.app}: no such file or folder (synthesize first: npx cdk synth)`);
  // Checked before anything starts: port 0 picks a free one when the twin listens.
  if (port !== 0) await assertPortFree(port);
  const dataDirLock = args.data ? lockDataDir(args.data) : undefined;

  const log = (line: string) => console.error(line);
  const twin = await startTemplateTwin({ app: args.app, stacks: args.stack, port, secrets, dataDir: args.data, timeScale, log }).catch((error: unknown) => {
    dataDirLock?.release();
    throw error instanceof AssemblyError ? new UsageError(error.message) : error;
  });
  if (twin.inboxes.length === 0) log(`warning: ${args.app} holds no WebhookInbox; its other resources run`);
  // A missing grant shows here as it happens, not only in the function's own log.
  twin.services.iam?.gateway.onDenial((denial) => log(`denied: ${denial.principal} ${denial.action} on ${denial.resource}`));
  const shutdown = async () => {
    const summary = iamSummary(twin);
    await twin.stop();
    dataDirLock?.release();
    console.log(JSON.stringify({ stopped: true, ...summary }));
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown());
  process.once('SIGTERM', () => void shutdown());
  console.log(JSON.stringify(readyLine(twin)));
}

/** What the IAM gateway judged: the calls of every function, and the refusals by function. */
function iamSummary(twin: TemplateTwin): { iam: { enforced: boolean; judged: number; deniedByFunction: Record<string, number> } } {
  const gateway = twin.services.iam?.gateway;
  const judged = [...(gateway?.evaluated.values() ?? [])].reduce((sum, count) => sum + count, 0);
  return { iam: { enforced: gateway !== undefined, judged, deniedByFunction: twin.deniedByFunction() } };
}

runMain(main);
