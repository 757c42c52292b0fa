/**
 * `npm start`: the local twin. Starts the inbox on 127.0.0.1, prints one JSON line with
 * `"ready": true` and everything a client needs, runs the demo (unless `--no-demo`), then serves
 * until interrupted (or exits after the demo with `--once`).
 */
import { parseArgs } from 'node:util';
import { hideSdkNodeVersionWarning } from '../lambda/shared/runtime/node-warnings';
import { formatSummary, runDemo } from './demo';
import { LOCAL_AWS, startTwin, TWIN_PROVIDERS } from './twin';

const USAGE = `usage: npm start -- [--no-demo] [--once] [--port N] [--provider NAME ...] [--secret NAME=VALUE ...] [--data DIR]
  --no-demo          only serve
  --once             exit after the demo
  --port N           webhook port (default 3000; 0 picks a free one)
  --provider NAME    serve this provider (repeatable; default answerline and echonova); one of ${Object.keys(TWIN_PROVIDERS).join(', ')}
  --secret NAME=VAL  use this signing secret for a provider (default: generated)
  --data DIR         keep DynamoDB data in DIR across restarts`;

hideSdkNodeVersionWarning();

async function main(): Promise<void> {
  let args;
  try {
    args = parseArgs({
      options: {
        'no-demo': { type: 'boolean', default: false },
        once: { type: 'boolean', default: false },
        port: { type: 'string', default: '3000' },
        provider: { type: 'string', multiple: true },
        secret: { type: 'string', multiple: true },
        data: { type: 'string' },
        help: { type: 'boolean', default: false },
      },
      strict: true,
    }).values;
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  if (args.help) {
    console.log(USAGE);
    return;
  }
  const port = Number(args.port);
  const secrets: Record<string, string> = {};
  for (const pair of args.secret ?? []) {
    const at = pair.indexOf('=');
    if (at <= 0) {
      console.error(`--secret wants NAME=VALUE, got "${pair}"\n${USAGE}`);
      process.exit(2);
    }
    secrets[pair.slice(0, at)] = pair.slice(at + 1);
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`--port wants a port number, got "${args.port}"\n${USAGE}`);
    process.exit(2);
  }
  const providers = args.provider?.flatMap((value) => value.split(',')).filter(Boolean);

  const twin = await startTwin({ port, providers, secrets, dataDir: args.data });
  const shutdown = async () => {
    await twin.stop();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown());
  process.once('SIGTERM', () => void shutdown());

  console.log(
    JSON.stringify({
      ready: true,
      endpoints: twin.urls,
      secrets: twin.secrets,
      emulators: twin.endpoints,
      region: LOCAL_AWS.region,
      tables: { inbox: twin.names.inboxTable, results: twin.names.resultsTable },
      queues: { work: twin.workQueueUrl, deadLetter: twin.deadLetterQueueUrl },
      bucket: twin.endpoints.s3 ? twin.names.bodyBucket : undefined,
      opsConfig: twin.opsConfigPath,
      logs: twin.logDir,
    }),
  );
  if (!args['no-demo']) {
    const summary = await runDemo(twin, (line) => console.log(line));
    console.log(formatSummary(summary));
    if (args.once) return shutdown();
  }
  console.log(`\nServing. Try the ops CLI: npx webhook-inbox status --config ${twin.opsConfigPath}  (Ctrl-C to stop)`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
