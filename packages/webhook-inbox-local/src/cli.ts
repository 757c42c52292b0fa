/**
 * The twin's command, the one entry point of this package. In the repository, `npm start` runs it
 * from its sources (and `npm run chaos` its `chaos` command); `webhook-inbox-local`, the package's
 * bin, runs its bundle (dist/cli.js, scripts/build.ts). It runs an app's synthesized template on
 * 127.0.0.1, prints one JSON line with `"ready": true` and everything a client needs, and serves
 * until interrupted. A usage error answers one line and exits 2.
 *
 * Both run the same options through the same checks. The repository's edition adds what needs the
 * repository itself: the example app (bin/app.ts, synthesized when no `--app` is given) and its
 * demo, the twin's own app (`--provider`), and the fault-injection run. The package's bundle is
 * built with WEBHOOK_INBOX_LOCAL_PACKAGE defined, which leaves those out, and with them the
 * construct and aws-cdk-lib; it prints a refused AWS call on stderr as it happens and, when
 * stopped, one JSON line with what the IAM gateway judged.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { hideSdkNodeVersionWarning } from '../../../lambda/shared/runtime/node-warnings';
import { AssemblyError } from './aws/cloudformation/assembly';
import { chaosCommand } from './chaos/command';
import { formatSummary, runDemo } from './twin/demo';
import { RecoveryDemo } from './twin/recovery-demo';
import { SynthesisError, synthesizeProject } from './twin/synth';
import { startTwin, Twin, twinOf } from './twin/inbox-twin';
import { readyLine, startTemplateTwin, TemplateTwin, TWIN_PROVIDERS, TwinProviderSpec } from './twin/twin';
import { Options, OPTIONS, PACKAGE_USAGE, REPOSITORY_OPTIONS, repositoryUsage } from './command-line';
import { assertPortFree, lockDataDir, parseCommandLine, portOption, runMain, secretOptions, timeScaleOption, UsageError } from './twin/usage';

/** Defined (as true) by the package's build; absent when the command runs from the repository's sources. */
declare const WEBHOOK_INBOX_LOCAL_PACKAGE: true | undefined;

/** What both editions start a twin with. */
interface TwinSettings {
  readonly port: number;
  readonly secrets: Record<string, string>;
  readonly timeScale: number;
  readonly apiGatewayCloudWatchRoleArn?: string;
  readonly runbookBase?: string;
  readonly log: (line: string) => void;
}

/** A twin that runs, and what its edition does once the ready line is out. */
interface StartedTwin {
  readonly template: TemplateTwin;
  stop(): Promise<void>;
  afterReady?(stop: () => Promise<void>): Promise<void>;
}

/** What sets one edition of the command apart. */
interface Edition {
  readonly usage: string;
  readonly options: typeof OPTIONS;
  /** The app to run when `--app` names none (else the edition picks one when it starts). */
  readonly defaultApp?: string;
  /** Commands of their own, by the first argument (`chaos`), with what follows it. */
  readonly commands: Readonly<Record<string, (argv: readonly string[]) => Promise<number>>>;
  /** Checks what only this edition reads of the options, before anything starts; how it starts its twin. */
  launcher(options: Options): (settings: TwinSettings) => Promise<StartedTwin>;
  /** What the line printed when the command is stopped says, if it prints one. */
  stopLine?(template: TemplateTwin): object;
}

const PACKAGE_EDITION: Edition = {
  usage: PACKAGE_USAGE,
  options: OPTIONS,
  defaultApp: 'cdk.out',
  commands: {},
  launcher: (options) => (settings) => startAppTwin(options.app ?? 'cdk.out', options, settings),
  stopLine: iamSummary,
};

/** The repository this module runs from: packages/webhook-inbox-local/src → the root. */
const PROJECT = join(__dirname, '..', '..', '..');

/** The edition that runs from the repository's sources. */
function repositoryEdition(): Edition {
  return {
    usage: repositoryUsage(),
    options: { ...OPTIONS, ...REPOSITORY_OPTIONS },
    commands: { chaos: chaosCommand },
    launcher: (options) => {
      const providers = twinProviders(options);
      return (settings) => (providers ? startOwnAppTwin(providers, options, settings) : startExampleTwin(options, settings));
    },
  };
}

/** The package's build defines WEBHOOK_INBOX_LOCAL_PACKAGE: the condition folds, and what only the repository's edition uses is left out. */
const EDITION: Edition = typeof WEBHOOK_INBOX_LOCAL_PACKAGE === 'undefined' ? repositoryEdition() : PACKAGE_EDITION;

hideSdkNodeVersionWarning();

async function main(argv: readonly string[]): Promise<number | void> {
  const command = EDITION.commands[argv[0]];
  if (command) return command(argv.slice(1));
  const usage = EDITION.usage;
  const options = parseCommandLine(EDITION.options, usage, argv) as Options;
  if (options.help) {
    console.log(usage);
    return 0;
  }
  const port = portOption(options.port, usage);
  const secrets = secretOptions(options.secret, usage);
  const timeScale = timeScaleOption(options['time-scale'], usage);
  const launch = EDITION.launcher(options);
  const app = options.app ?? EDITION.defaultApp;
  if (app && !existsSync(app)) throw new UsageError(`--app ${app}: no such file or folder (synthesize first: npx cdk synth)`);
  // Checked before anything starts: port 0 picks a free one when the twin listens.
  if (port !== 0) await assertPortFree(port);
  const dataDirLock = options.data ? lockDataDir(options.data) : undefined;

  const log = (line: string) => console.error(line);
  const apiGatewayCloudWatchRoleArn = options['api-gateway-cloudwatch-role'];
  const runbookBase = options['runbook-base'];
  const twin = await launch({ port, secrets, timeScale, apiGatewayCloudWatchRoleArn, runbookBase, log }).catch((error: unknown) => {
    dataDirLock?.release();
    throw error instanceof AssemblyError ? new UsageError(error.message) : error;
  });
  const stop = async () => {
    const stopLine = EDITION.stopLine?.(twin.template);
    await twin.stop();
    dataDirLock?.release();
    if (stopLine) console.log(JSON.stringify({ stopped: true, ...stopLine }));
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
  console.log(JSON.stringify(readyLine(twin.template)));
  if (twin.afterReady) {
    // From the start of the process: `npm start`'s bundling and loading included.
    log(`ready in ${process.uptime().toFixed(1)} s`);
    await twin.afterReady(stop);
  }
}

/** An app's template, every stack asked for, whatever it holds (the package's edition). */
async function startAppTwin(app: string, options: Options, settings: TwinSettings): Promise<StartedTwin> {
  const template = await startTemplateTwin({ app, stacks: options.stack, dataDir: options.data, ...settings });
  if (template.inboxes.length === 0) settings.log(`warning: ${app} holds no WebhookInbox; its other resources run`);
  return { template, stop: () => template.stop() };
}

/** The twin's own app with the providers of `--provider` and `--providers`, and the demo. */
async function startOwnAppTwin(providers: TwinProviderSpec[], options: Options, settings: TwinSettings): Promise<StartedTwin> {
  // GitHub and Stripe are recovered from fakes of their APIs, shown after the demo.
  const recovery = await RecoveryDemo.start(providers);
  // A provider setting the construct refuses (an invalid HMAC scheme) is the caller's to fix.
  const twin = await startTwin({
    port: settings.port,
    providers,
    secrets: settings.secrets,
    ...(recovery ? { recovery: recovery.recovery, extraSecrets: recovery.secrets } : {}),
    dataDir: options.data,
    runbookBase: settings.runbookBase,
    log: settings.log,
  }).catch((error: unknown) => {
    // The construct's refusals at synth are named ValidationError (their message starts with its path).
    void recovery?.stop();
    throw error instanceof Error && (error.name === 'ValidationError' || /^unknown preset/.test(error.message))
      ? new UsageError(error.message.replace(/:?\n- /g, (separator) => (separator.startsWith(':') ? ': ' : '; ')))
      : error;
  });
  return withDemo(twin, options, recovery);
}

/** The given app, else the example app (bin/app.ts) synthesized, and the demo on its first inbox. */
async function startExampleTwin(options: Options, settings: TwinSettings): Promise<StartedTwin> {
  let app = options.app;
  if (!app) {
    settings.log('synthesizing the example app (bin/app.ts)…');
    app = synthesizeExampleApp(join(PROJECT, '.twin', 'cdk.out'));
  }
  const template = await startTemplateTwin({ app, stacks: options.stack, dataDir: options.data, ...settings });
  const [inbox] = template.inboxes;
  if (!inbox) {
    await template.stop();
    throw new UsageError(`${app} holds no WebhookInbox`);
  }
  return withDemo(twinOf(template, inbox), options);
}

/** Once ready: the demo (unless `--no-demo`), then stop (`--once`) or serve. */
function withDemo(twin: Twin, options: Options, recovery?: RecoveryDemo): StartedTwin {
  const afterReady = async (stop: () => Promise<void>) => {
    if (!options['no-demo']) {
      const summary = await runDemo(twin, (line) => console.log(line));
      console.log(formatSummary(summary));
      if (recovery) console.log(`\nRecovered through the providers' APIs: ${await recovery.run(twin, (line) => console.log(line))}`);
      if (options.once) return stop();
    }
    const consoleUrl = twin.template.consoleUrl ? `the console at ${twin.template.consoleUrl}; ` : '';
    console.log(`\nServing: ${consoleUrl}the ops CLI: npx webhook-inbox status --config ${twin.opsConfigPath}  (Ctrl-C to stop)`);
  };
  return {
    template: twin.template,
    stop: async () => {
      await twin.stop();
      await recovery?.stop();
    },
    afterReady,
  };
}

/** What the IAM gateway judged: the calls of every function, and the refusals by function. */
function iamSummary(twin: TemplateTwin): { iam: { enforced: boolean; judged: number; deniedByFunction: Record<string, number> } } {
  const gateway = twin.services.iam?.gateway;
  const judged = [...(gateway?.evaluated.values() ?? [])].reduce((sum, count) => sum + count, 0);
  return { iam: { enforced: gateway !== undefined, judged, deniedByFunction: twin.deniedByFunction() } };
}

/** The providers of `--provider` and `--providers`, checked; undefined when neither is given. */
function twinProviders(options: Options): TwinProviderSpec[] | undefined {
  const { provider: flags, providers: file } = options;
  if (!flags && !file) return undefined;
  if (options.app) throw new UsageError("--provider runs the twin's own app; it cannot be combined with --app");
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

function synthesizeExampleApp(outdir: string): string {
  try {
    return synthesizeProject(PROJECT, outdir);
  } catch (error) {
    throw error instanceof SynthesisError ? new UsageError(error.message) : error;
  }
}

runMain(() => main(process.argv.slice(2)));
