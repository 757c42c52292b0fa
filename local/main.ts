/**
 * `npm start`: the local twin. Starts the inbox on 127.0.0.1, prints one JSON line with
 * `"ready": true` and everything a client needs, runs the demo (unless `--no-demo`), then serves
 * until interrupted (or exits after the demo with `--once`).
 */
import { parseArgs } from 'node:util';
import { hideSdkNodeVersionWarning } from '../lambda/shared/runtime/node-warnings';
import { formatSummary, runDemo } from './demo';
import { LOCAL_AWS, startTwin, TWIN_PROVIDERS } from './twin';
import { assertPortFree, lockDataDir, runMain, UsageError } from './usage';

const USAGE = `usage: npm start -- [--no-demo] [--once] [--port N] [--provider NAME ...] [--secret NAME=VALUE ...] [--data DIR]
  --no-demo          only serve
  --once             exit after the demo
  --port N           webhook port (default 3000; 0 picks a free one)
  --provider NAME    serve this provider (repeatable; default answerline and echonova); one of ${Object.keys(TWIN_PROVIDERS).join(', ')}
  --secret NAME=VAL  use this signing secret for a provider (default: generated)
  --data DIR         keep DynamoDB data in DIR across restarts`;

hideSdkNodeVersionWarning();

async function main(): Promise<number | void> {
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
    throw new UsageError((error as Error).message, USAGE);
  }
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  const port = Number(args.port);
  const secrets: Record<string, string> = {};
  for (const pair of args.secret ?? []) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`--secret wants NAME=VALUE, got "${pair}"`, USAGE);
    secrets[pair.slice(0, at)] = pair.slice(at + 1);
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port wants a port number, got "${args.port}"`, USAGE);
  const providers = args.provider?.flatMap((value) => value.split(',')).filter(Boolean);
  const unknownProvider = providers?.find((name) => !Object.hasOwn(TWIN_PROVIDERS, name));
  if (unknownProvider !== undefined) {
    throw new UsageError(`--provider ${unknownProvider} is not one the twin serves; pick from ${Object.keys(TWIN_PROVIDERS).join(', ')}`);
  }
  // Port 0 picks a free one when the twin listens.
  if (port !== 0) await assertPortFree(port);
  const dataDirLock = args.data ? lockDataDir(args.data) : undefined;

  const startedAt = Date.now();
  console.error('starting the twin: emulators, stand-ins, Lambda hosts…');
  const twin = await startTwin({ port, providers, secrets, dataDir: args.data });
  const shutdown = async () => {
    await twin.stop();
    dataDirLock?.release();
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
  console.error(`ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
  if (!args['no-demo']) {
    const summary = await runDemo(twin, (line) => console.log(line));
    console.log(formatSummary(summary));
    if (args.once) return shutdown();
  }
  console.log(`\nServing. Try the ops CLI: npx webhook-inbox status --config ${twin.opsConfigPath}  (Ctrl-C to stop)`);
}

runMain(main);
