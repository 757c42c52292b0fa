/**
 * Every TypeScript block of README.md, CONTRIBUTING.md and docs/ is code a user can paste: it
 * carries its own imports, declares nothing it does not define (`declare const x` compiles and
 * crashes when run), and type-checks as a module of a consumer's project against the package's
 * API (one TypeScript program for all of them). The blocks that are whole apps (`new App()`) are also synthesized in a
 * process of their own, as `cdk synth` runs them, with cdk-nag's AwsSolutions checks, and none
 * leaves a finding the construct causes unacknowledged: on the construct's own resources, or on the
 * app's principals it grants to. The stack output keys DEPLOY.md lists are those its app synthesizes.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ts from 'typescript';
import { CodeBlock, codeBlocks, projectDocuments } from '../support/markdown';
import type { SnippetJob, SnippetOutcome } from '../support/snippet-runner';

const ROOT = join(__dirname, '..', '..');
/** Where the snippets are compiled as if they were files of a consumer's project (nothing is written there). */
const SNIPPET_DIR = join(ROOT, 'docs-snippets');

const snippets = projectDocuments(ROOT)
  .flatMap(codeBlocks)
  .filter((block) => block.language === 'ts' || block.language === 'typescript');
const nameOf = (block: CodeBlock) => `${block.document.name}:${block.line}`;
const fileOf = (block: CodeBlock) => join(SNIPPET_DIR, `${block.document.name.replace(/[/.]/g, '_')}_${block.line}.ts`);
const isApp = (block: CodeBlock) => /\bnew App\(/.test(block.code);

/** A consumer's compiler settings: strict, Node's module resolution, the package by its name. */
const OPTIONS: ts.CompilerOptions = {
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  esModuleInterop: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.Node20,
  moduleResolution: ts.ModuleResolutionKind.Node16,
  types: ['node'],
  paths: { 'cdk-webhook-inbox': [join(ROOT, 'lib', 'index.ts')], 'cdk-webhook-inbox/client': [join(ROOT, 'client', 'index.ts')] },
};

/** A snippet as CommonJS, as ts-node or esbuild would run it. */
function transpile(code: string, fileName: string): string {
  return ts.transpileModule(code, { fileName, compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true } })
    .outputText;
}

/**
 * The control of the cdk-nag check: an app whose own function has an old runtime (its own finding)
 * and is granted the inbox table with aws-cdk-lib's `grantReadData` (its `index/*` is the inbox's).
 */
const CONTROL = 'control app';
const CONTROL_APP = `
import { App, Stack } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { WebhookInbox } from 'cdk-webhook-inbox';
const app = new App();
const stack = new Stack(app, 'Control');
const inbox = new WebhookInbox(stack, 'Inbox');
const reader = new lambda.Function(stack, 'Reader', { runtime: lambda.Runtime.NODEJS_18_X, handler: 'index.handler', code: lambda.Code.fromInline('exports.handler = async () => ({});') });
inbox.inboxTable.grantReadData(reader);
app.synth();
`;

test('the documents hold TypeScript snippets and whole apps (the extraction works)', () => {
  expect(snippets.length).toBeGreaterThan(10);
  expect(snippets.filter(isApp).length).toBeGreaterThan(5);
});

describe('each snippet is pasteable', () => {
  test.each(snippets.map((block) => [nameOf(block), block] as const))('%s imports what it uses and declares nothing', (_name, block) => {
    expect(block.code).toMatch(/^import /m);
    expect(block.code).not.toMatch(/^\s*declare\s/m);
  });
});

describe('every snippet type-checks against the package', () => {
  let diagnostics: Map<string, string[]>;

  beforeAll(() => {
    const sources = new Map(snippets.map((block) => [fileOf(block), block.code]));
    const host = ts.createCompilerHost(OPTIONS);
    const { fileExists, readFile, getSourceFile } = host;
    host.fileExists = (file) => sources.has(file) || fileExists.call(host, file);
    host.readFile = (file) => sources.get(file) ?? readFile.call(host, file);
    host.getSourceFile = (file, language, ...rest) =>
      sources.has(file) ? ts.createSourceFile(file, sources.get(file)!, language) : getSourceFile.call(host, file, language, ...rest);
    const program = ts.createProgram([...sources.keys()], OPTIONS, host);
    diagnostics = new Map([...sources.keys()].map((file) => [file, []]));
    for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
      const file = diagnostic.file?.fileName;
      const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
      const at = diagnostic.file && diagnostic.start !== undefined ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line + 1 : 0;
      // A problem outside the snippets (the package's own sources) is every snippet's problem.
      for (const target of file && diagnostics.has(file) ? [file] : [...diagnostics.keys()]) diagnostics.get(target)!.push(`line ${at}: ${text}`);
    }
  });

  test.each(snippets.map((block) => [nameOf(block), block] as const))('%s', (_name, block) => {
    expect(diagnostics.get(fileOf(block))).toEqual([]);
  });
});

describe('every snippet that is a whole app synthesizes', () => {
  const apps = snippets.filter(isApp);
  let outcomes: Map<string, SnippetOutcome>;
  let outdir: string;

  beforeAll(() => {
    outdir = mkdtempSync(join(tmpdir(), 'doc-snippets-'));
    const jobs: SnippetJob[] = apps.map((block) => ({
      name: nameOf(block),
      filename: fileOf(block),
      javascript: transpile(block.code, fileOf(block)),
      addsNag: block.code.includes('AwsSolutionsChecks'),
    }));
    jobs.push({ name: CONTROL, filename: join(SNIPPET_DIR, 'control.ts'), javascript: transpile(CONTROL_APP, 'control.ts'), addsNag: false });
    const jobsFile = join(outdir, 'jobs.json');
    writeFileSync(jobsFile, JSON.stringify(jobs));
    const run = spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', join(ROOT, 'test', 'support', 'snippet-runner.ts'), jobsFile], {
      cwd: ROOT,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      env: {
        ...process.env,
        TS_NODE_PROJECT: join(ROOT, 'tsconfig.dev.json'),
        // Each app writes its assembly to a new temporary folder, here under ours (CDK_OUTDIR would make it synthesize again at exit).
        TMPDIR: outdir,
        // The assembly references the handlers' assets where they are, as the twin's synth does: nothing is copied.
        CDK_CONTEXT_JSON: JSON.stringify({ 'aws:cdk:disable-asset-staging': true }),
      },
    });
    if (run.status !== 0) throw new Error(`the snippet runner failed:\n${run.stderr}`);
    outcomes = new Map((JSON.parse(run.stdout.trim().split('\n').pop()!) as SnippetOutcome[]).map((outcome) => [outcome.name, outcome]));
  }, 300_000);

  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  test.each(apps.map((block) => [nameOf(block)] as const))('%s synthesizes its stacks', (name) => {
    const outcome = outcomes.get(name)!;
    expect(outcome.error).toBeUndefined();
    expect(Object.keys(outcome.stacks).length).toBeGreaterThan(0);
  });

  test("the cdk-nag check tells the construct's findings from the app's own (control)", () => {
    const findings = outcomes.get(CONTROL)!.findings;
    expect(findings).toContainEqual({
      rule: expect.stringMatching(/^AwsSolutions-IAM5\[Resource::<InboxInboxTable\w+\.Arn>\/index\/\*\]$/),
      path: 'Control/Reader/ServiceRole/DefaultPolicy/Resource',
      causedByInbox: true,
    });
    expect(findings).toContainEqual({ rule: 'AwsSolutions-L1', path: 'Control/Reader/Resource', causedByInbox: false });
  });

  test.each(apps.map((block) => [nameOf(block)] as const))('%s: cdk-nag finds nothing unacknowledged that the construct causes', (name) => {
    expect(outcomes.get(name)!.findings.filter((finding) => finding.causedByInbox)).toEqual([]);
  });

  test("the output keys DEPLOY.md lists are its app's", () => {
    const [deployApp] = apps.filter((block) => block.document.name === join('docs', 'DEPLOY.md'));
    const listed = [...deployApp.document.text.matchAll(/^\| `(Inbox\w+[0-9A-F]{8})` \|/gm)].map((match) => match[1]);
    expect(listed.length).toBeGreaterThanOrEqual(6);
    expect(
      Object.values(outcomes.get(nameOf(deployApp))!.stacks)
        .flat()
        .sort(),
    ).toEqual(listed.sort());
  });
});
