/**
 * Runs documentation snippets that are whole CDK apps, as a consumer's `cdk synth` would, in a
 * process of its own (test/docs/snippets.test.ts starts it): `cdk-webhook-inbox` and
 * `cdk-webhook-inbox/client` resolve to this repository's sources, each app synthesizes with
 * cdk-nag's AwsSolutions checks added (unless it adds them itself), and each reports its stacks'
 * output keys and every cdk-nag finding it left unacknowledged, each marked with whether it is
 * caused by a `WebhookInbox` (on one of its resources, or naming one of them).
 *
 * Input: argv[2] is a JSON file of `SnippetJob[]`; output: one JSON line of `SnippetOutcome[]`.
 */
import { readFileSync } from 'node:fs';
import Module from 'node:module';
import { join } from 'node:path';
import { App, CfnElement, Stack, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { IConstruct } from 'constructs';
import { WebhookInbox } from '../../lib';

export interface SnippetJob {
  /** Where the snippet is (document:line), for messages. */
  readonly name: string;
  /** A file name under the repository the module is compiled as (it need not exist). */
  readonly filename: string;
  /** The snippet, transpiled to CommonJS. */
  readonly javascript: string;
  /** Whether the snippet adds cdk-nag itself. */
  readonly addsNag: boolean;
}

export interface NagFinding {
  readonly rule: string;
  readonly path: string;
  /** On a resource of a WebhookInbox, or naming one of its resources (a grant it made on another principal). */
  readonly causedByInbox: boolean;
}

export interface SnippetOutcome {
  readonly name: string;
  readonly error?: string;
  /** Each synthesized stack's output keys. */
  readonly stacks: Record<string, string[]>;
  readonly findings: NagFinding[];
}

interface ValidationReport {
  readonly pluginReports: { readonly violations: { readonly ruleName: string; readonly violatingConstructs: { readonly constructPath: string }[] }[] }[];
}

const ROOT = join(__dirname, '..', '..');
/** The package, as a consumer imports it, served from the sources. */
const PACKAGE_ENTRIES: Record<string, string> = {
  'cdk-webhook-inbox': join(ROOT, 'lib', 'index.ts'),
  'cdk-webhook-inbox/client': join(ROOT, 'client', 'index.ts'),
};

const moduleInternals = Module as unknown as { _resolveFilename: (request: string, ...rest: unknown[]) => string };
const resolveFilename = moduleInternals._resolveFilename;
moduleInternals._resolveFilename = (request, ...rest) => resolveFilename(PACKAGE_ENTRIES[request] ?? request, ...rest);

/** The paths of every inbox in the app and the logical ids of their resources. */
function inboxFootprint(app: App): { paths: string[]; logicalIds: string[] } {
  const inboxes = app.node.findAll().filter((construct): construct is WebhookInbox => construct instanceof WebhookInbox);
  const logicalIds = inboxes.flatMap((inbox) =>
    inbox.node
      .findAll()
      .filter((construct: IConstruct): construct is CfnElement => CfnElement.isCfnElement(construct))
      .map((element) => Stack.of(element).getLogicalId(element)),
  );
  return { paths: inboxes.map((inbox) => `${inbox.node.path}/`), logicalIds };
}

function findingsOf(app: App, report: ValidationReport): NagFinding[] {
  const { paths, logicalIds } = inboxFootprint(app);
  return report.pluginReports.flatMap((plugin) =>
    plugin.violations.flatMap((violation) =>
      violation.violatingConstructs.map(({ constructPath }) => ({
        rule: violation.ruleName,
        path: constructPath,
        causedByInbox: paths.some((path) => constructPath.startsWith(path)) || logicalIds.some((id) => violation.ruleName.includes(id)),
      })),
    ),
  );
}

function run(job: SnippetJob): SnippetOutcome {
  const apps: App[] = [];
  const stacks: Record<string, string[]> = {};
  let findings: NagFinding[] = [];
  const synth = App.prototype.synth;
  App.prototype.synth = function (this: App, options) {
    apps.push(this);
    if (!job.addsNag) Validations.of(this).addPlugins(new AwsSolutionsChecks(this, { verbose: true }));
    try {
      return synth.call(this, options);
    } catch (error) {
      const report = /found in: (\S+)/.exec((error as Error).message)?.[1];
      if (!report) throw error;
      findings = findingsOf(this, JSON.parse(readFileSync(report, 'utf8')) as ValidationReport);
      return undefined as never;
    } finally {
      // The templates are written before the validation plugins run.
      for (const stack of this.node.findAll().filter((construct): construct is Stack => Stack.isStack(construct))) {
        stacks[stack.stackName] = outputKeys(join(this.outdir, stack.templateFile));
      }
    }
  };
  try {
    const module = new Module(job.filename);
    module.filename = job.filename;
    module.paths = (Module as unknown as { _nodeModulePaths: (dir: string) => string[] })._nodeModulePaths(ROOT);
    (module as unknown as { _compile: (code: string, filename: string) => void })._compile(job.javascript, job.filename);
    if (apps.length === 0) return { name: job.name, error: 'the app never calls app.synth()', stacks, findings };
    return { name: job.name, stacks, findings };
  } catch (error) {
    return { name: job.name, error: (error as Error).stack ?? String(error), stacks, findings };
  } finally {
    App.prototype.synth = synth;
  }
}

/** A synthesized template's output keys. */
function outputKeys(templatePath: string): string[] {
  return Object.keys((JSON.parse(readFileSync(templatePath, 'utf8')) as { Outputs?: object }).Outputs ?? {});
}

const jobs = JSON.parse(readFileSync(process.argv[2], 'utf8')) as SnippetJob[];
process.stdout.write(`${JSON.stringify(jobs.map(run))}\n`);
