/**
 * `npm start`: the local twin. Synthesizes the example app (bin/app.ts) and runs its template on
 * 127.0.0.1 (or runs a given assembly, or the twin's own app for `--provider`), prints one JSON
 * line with `"ready": true` and everything a client needs, runs the demo (unless `--no-demo`),
 * then serves until interrupted (or exits after the demo with `--once`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { hideSdkNodeVersionWarning } from '../../../../lambda/shared/runtime/node-warnings';
import { formatSummary, runDemo } from './demo';
import { SynthesisError, synthesizeProject } from './synth';
import { AssemblyError } from '../aws/cloudformation/assembly';
import { readyLine, startTemplateTwin, startTwin, Twin, twinOf, TWIN_PROVIDERS, TwinProviderSpec } from './twin';
import { assertPortFree, lockDataDir, parseCommandLine, portOption, runMain, secretOptions, timeScaleOption, UsageError } from './usage';

const USAGE = `usage: npm start -- [--app PATH] [--stack NAME ...] [--no-demo] [--once] [--port N] [--provider NAME ...] [--secret NAME=VALUE ...] [--data DIR] [--time-scale X]
  --app PATH         run this cloud assembly (cdk.out) or template (default: synthesize bin/app.ts)
  --stack NAME       only this stack of the assembly (repeatable)
  --no-demo          only serve
  --once             exit after the demo
  --port N           webhook port (default 3000; 0 picks a free one)
  --provider NAME[=PRESET]
                     run the twin's own app with this provider instead (repeatable): a preset by its name, or
                     under another name (shop=stripe); presets: ${Object.keys(TWIN_PROVIDERS).join(', ')}
  --providers FILE   the same, from a JSON array: {"name", "preset"} entries, and {"name", "preset": "hmac",
                     "signatureHeader", ...} for the generic HMAC scheme (the options of WebhookProvider.hmac)
  --secret NAME=VAL  use this signing secret for a provider (default: generated)
  --data DIR         keep DynamoDB data in DIR across restarts
  --time-scale X     run schedules X times faster than real time (default 1)`;

const PROJECT = join(__dirname, '..', '..', '..', '..');

hideSdkNodeVersionWarning();

async function main(): Promise<number | void> {
  const args = parseCommandLine(
    {
      'no-demo': { type: 'boolean', default: false },
      once: { type: 'boolean', default: false },
      port: { type: 'string', default: '3000' },
      provider: { type: 'string', multiple: true },
      providers: { type: 'string' },
      secret: { type: 'string', multiple: true },
      data: { type: 'string' },
      app: { type: 'string' },
      stack: { type: 'string', multiple: true },
      'time-scale': { type: 'string', default: '1' },
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
  const providers = twinProviders(args.provider, args.providers);
  const timeScale = timeScaleOption(args['time-scale'], USAGE);
  if (providers && args.app) throw new UsageError("--provider runs the twin's own app; it cannot be combined with --app");
  if (args.app && !existsSync(args.app)) throw new UsageError(`--app ${args.app}: no such file or folder (synthesize first: npx cdk synth)`);
  // Port 0 picks a free one when the twin listens.
  if (port !== 0) await assertPortFree(port);
  const dataDirLock = args.data ? lockDataDir(args.data) : undefined;

  const startedAt = Date.now();
  const log = (line: string) => console.error(line);
  let twin: Twin;
  if (providers) {
    // A provider setting the construct refuses (an invalid HMAC scheme) is the caller's to fix.
    twin = await startTwin({ port, providers, secrets, dataDir: args.data, log }).catch((error: unknown) => {
      throw error instanceof Error && /^(Invalid WebhookInbox props|unknown preset)/.test(error.message)
        ? new UsageError(error.message.replace(/:?\n- /g, (separator) => (separator.startsWith(':') ? ': ' : '; ')))
        : error;
    });
  } else {
    let app = args.app;
    if (!app) {
      log('synthesizing the example app (bin/app.ts)…');
      app = synthesizeFromProject(join(PROJECT, '.twin', 'cdk.out'));
    }
    const template = await startTemplateTwin({ app, stacks: args.stack, port, secrets, dataDir: args.data, timeScale, log }).catch((error: unknown) => {
      throw error instanceof AssemblyError ? new UsageError(error.message) : error;
    });
    const [inbox] = template.inboxes;
    if (!inbox) {
      await template.stop();
      throw new UsageError(`${app} holds no WebhookInbox`);
    }
    twin = twinOf(template, inbox);
  }
  const shutdown = async () => {
    await twin.stop();
    dataDirLock?.release();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown());
  process.once('SIGTERM', () => void shutdown());

  console.log(JSON.stringify(readyLine(twin.template)));
  console.error(`ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
  if (!args['no-demo']) {
    const summary = await runDemo(twin, (line) => console.log(line));
    console.log(formatSummary(summary));
    if (args.once) return shutdown();
  }
  console.log(`\nServing. Try the ops CLI: npx webhook-inbox status --config ${twin.opsConfigPath}  (Ctrl-C to stop)`);
}

/** The providers of `--provider` and `--providers`, checked; undefined when neither is given. */
function twinProviders(flags: readonly string[] | undefined, file: string | undefined): TwinProviderSpec[] | undefined {
  if (!flags && !file) return undefined;
  const specs: TwinProviderSpec[] = (flags ?? [])
    .flatMap((value) => value.split(','))
    .filter(Boolean)
    .map((value) => {
      const [name, preset = name] = value.split('=');
      return { name, preset };
    });
  if (file) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, 'utf8'));
    } catch (error) {
      throw new UsageError(`--providers ${file}: ${(error as Error).message}`);
    }
    if (!Array.isArray(parsed) || parsed.some((entry) => typeof entry?.name !== 'string' || typeof entry?.preset !== 'string')) {
      throw new UsageError(`--providers ${file} must hold a JSON array of objects with a "name" and a "preset"`);
    }
    specs.push(...(parsed as TwinProviderSpec[]));
  }
  const presets = [...Object.keys(TWIN_PROVIDERS), 'hmac'];
  const unknown = specs.find((spec) => !presets.includes(spec.preset));
  if (unknown) throw new UsageError(`--provider ${unknown.name}: "${unknown.preset}" is not a preset the twin serves; pick from ${presets.join(', ')}`);
  const hmacFromFlag = specs.find((spec) => spec.preset === 'hmac' && !('signatureHeader' in spec));
  if (hmacFromFlag) throw new UsageError(`--provider ${hmacFromFlag.name}: the hmac scheme needs its settings; give it in a --providers file`);
  return specs;
}

function synthesizeFromProject(outdir: string): string {
  try {
    return synthesizeProject(PROJECT, outdir);
  } catch (error) {
    throw error instanceof SynthesisError ? new UsageError(error.message) : error;
  }
}

runMain(main);
