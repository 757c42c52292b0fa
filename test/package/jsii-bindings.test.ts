/**
 * The construct translates into every language jsii publishes to: `jsii-pacmak --code-only`
 * generates the Python, Java, .NET and Go bindings from the compiled assembly (`.jsii`, written by
 * `npm run compile`), as the registries' packages would be built from it, and each one must expose
 * the `WebhookInbox` class under the published package name, with every prop that
 * `WebhookInboxProps` declares in lib/, named as that language names it, and depend on the
 * aws-cdk-lib the package declares. This machine has no
 * registry for those languages, so nothing is built or installed; the Python sources are parsed
 * by `python3 -m compileall` where a Python is on the PATH.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ts from 'typescript';

const ROOT = join(__dirname, '..', '..');
const out = mkdtempSync(join(tmpdir(), 'webhook-inbox-bindings-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

/** The props interface's members as lib/ declares them, read from the TypeScript source. */
function declaredProps(): string[] {
  const file = join(ROOT, 'lib', 'webhook-inbox-props.ts');
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const props = source.statements.find((node): node is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(node) && node.name.text === 'WebhookInboxProps');
  if (!props) throw new Error(`no WebhookInboxProps in ${file}`);
  if (props.heritageClauses?.length) throw new Error('WebhookInboxProps extends another interface: read its members too');
  return props.members.filter(ts.isPropertySignature).map((member) => (member.name as ts.Identifier).text);
}

const snakeCase = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
const pascalCase = (name: string) => name[0].toUpperCase() + name.slice(1);
const read = (...path: string[]) => readFileSync(join(out, ...path), 'utf8');
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The lowest version a peer dependency range of package.json admits (`^2.100.0` → `2.100.0`). */
function peerFloor(name: string): string {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string> };
  const floor = /^\^(\d+\.\d+\.\d+)$/.exec(manifest.peerDependencies[name]);
  if (!floor) throw new Error(`peerDependencies.${name} is not a caret range: ${manifest.peerDependencies[name]}`);
  return floor[1];
}

const props = declaredProps();
const cdk = peerFloor('aws-cdk-lib');

beforeAll(() => {
  const run = spawnSync(
    process.execPath,
    [
      require.resolve('jsii-pacmak/bin/jsii-pacmak'),
      '--code-only',
      '--targets',
      'python,java,dotnet,go',
      '--outdir',
      out,
      '--no-fingerprint',
      '--no-npmignore',
      ROOT,
    ],
    { encoding: 'utf8', env: { ...process.env, JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION: process.versions.node.split('.')[0] } },
  );
  if (run.status !== 0) throw new Error(`jsii-pacmak failed (${run.status}): ${run.stderr.slice(-2000)}`);
}, 300_000);

test('the props interface is read from lib/ (the oracle of the checks below)', () => {
  expect(props).toEqual(expect.arrayContaining(['providers', 'inboxTable', 'workQueue', 'maxBodySize', 'alarms']));
});

describe('Python: distribution cdk-webhook-inbox, module cdk_webhook_inbox', () => {
  const module = () => read('python', 'src', 'cdk_webhook_inbox', '__init__.py');

  test('is the published distribution and requires the declared aws-cdk-lib floor', () => {
    const setup = read('python', 'setup.py');
    expect(setup).toMatch(/"name": "cdk-webhook-inbox"/);
    expect(setup).toContain(`"aws-cdk-lib>=${cdk}, <3.0.0"`);
  });

  test('WebhookInbox(scope, id, *, <every prop in snake_case>)', () => {
    const init = new RegExp(
      String.raw`\nclass WebhookInbox\([\s\S]*?def __init__\(\s*self,\s*scope: [^\n]+\n\s*id: builtins\.str,\s*\*,([\s\S]*?)\) -> None:`,
    ).exec(module());
    expect(init).not.toBeNull();
    const keywords = [...init![1].matchAll(/^\s*(\w+):/gm)].map((match) => match[1]);
    expect(keywords.sort()).toEqual(props.map(snakeCase).sort());
  });

  const python = spawnSync('python3', ['--version']).status === 0;
  (python ? test : test.skip)('parses (python3 -m compileall)', () => {
    const compiled = spawnSync('python3', ['-m', 'compileall', '-q', join(out, 'python', 'src')], { encoding: 'utf8' });
    expect(compiled.stdout + compiled.stderr).toBe('');
    expect(compiled.status).toBe(0);
  });
});

describe('Java: io.github.cdk-webhook-inbox:cdk-webhook-inbox, package io.github.cdkwebhookinbox', () => {
  const source = (name: string) => read('java', 'src', 'main', 'java', 'io', 'github', 'cdkwebhookinbox', `${name}.java`);

  test('is the published artifact and depends on the declared aws-cdk-lib floor', () => {
    const pom = read('java', 'pom.xml');
    expect(pom).toMatch(/<groupId>io\.github\.cdk-webhook-inbox<\/groupId>\s*<artifactId>cdk-webhook-inbox<\/artifactId>/);
    expect(pom).toMatch(new RegExp(String.raw`<artifactId>aws-cdk-lib</artifactId>\s*<version>\[${escape(cdk)},3\.0\.0\)</version>`));
  });

  test('WebhookInbox(scope, id, props) and a builder method per prop, on the construct and on WebhookInboxProps', () => {
    const inbox = source('WebhookInbox');
    expect(inbox).toMatch(/^package io\.github\.cdkwebhookinbox;/);
    expect(inbox).toMatch(
      /public WebhookInbox\(final [^,]*software\.constructs\.Construct scope, final [^,]*java\.lang\.String id, final [^,]*io\.github\.cdkwebhookinbox\.WebhookInboxProps props\)/,
    );
    const propsSource = source('WebhookInboxProps');
    for (const prop of props) {
      expect([prop, new RegExp(String.raw`public Builder ${prop}\(`).test(inbox)]).toEqual([prop, true]);
      expect([prop, new RegExp(String.raw`public Builder ${prop}\(`).test(propsSource)]).toEqual([prop, true]);
    }
  });
});

describe('.NET: package CdkWebhookInbox, namespace CdkWebhookInbox', () => {
  const source = (name: string) => read('dotnet', 'CdkWebhookInbox', 'CdkWebhookInbox', `${name}.cs`);

  test('is the published package and references the declared Amazon.CDK.Lib floor', () => {
    const project = read('dotnet', 'CdkWebhookInbox', 'CdkWebhookInbox.csproj');
    expect(project).toContain('<PackageId>CdkWebhookInbox</PackageId>');
    expect(project).toContain(`<PackageReference Include="Amazon.CDK.Lib" Version="[${cdk},3.0.0)" />`);
  });

  test('WebhookInbox(scope, id, props) and IWebhookInboxProps with every prop in PascalCase', () => {
    const inbox = source('WebhookInbox');
    expect(inbox).toMatch(/namespace CdkWebhookInbox\b/);
    expect(inbox).toMatch(/public WebhookInbox\(Constructs\.Construct scope, string id, CdkWebhookInbox\.IWebhookInboxProps\? props = null\)/);
    // The interface's own members, before the proxy class jsii nests in it.
    const members = source('IWebhookInboxProps').split(/\bclass _Proxy\b/)[0];
    const declared = [...members.matchAll(/\[JsiiProperty\(name: "(\w+)"[^\n]*\n(?:\s*\[[^\n]*\n)*[^\n]*? (\w+)\s*\n\s*\{/g)];
    expect(declared.map(([, jsName, member]) => [jsName, member]).sort()).toEqual(props.map((prop) => [prop, pascalCase(prop)]).sort());
  });
});

describe('Go: module github.com/cdk-webhook-inbox/cdk-webhook-inbox-go, package cdkwebhookinbox', () => {
  const source = (name: string) => read('go', 'cdkwebhookinbox', `${name}.go`);

  test('is the published module and requires the aws-cdk-lib release it was generated with', () => {
    const mod = read('go', 'cdkwebhookinbox', 'go.mod');
    expect(mod).toMatch(/^module github\.com\/cdk-webhook-inbox\/cdk-webhook-inbox-go\/cdkwebhookinbox$/m);
    // A go.mod names one version, not a range: jsii-pacmak writes the installed aws-cdk-lib's.
    const built = (JSON.parse(readFileSync(join(ROOT, 'node_modules', 'aws-cdk-lib', 'package.json'), 'utf8')) as { version: string }).version;
    expect(mod).toContain(`github.com/aws/aws-cdk-go/awscdk/v2 v${built}`);
  });

  test('NewWebhookInbox(scope, id, props) and a WebhookInboxProps field per prop', () => {
    expect(source('WebhookInbox')).toMatch(/^package cdkwebhookinbox$/m);
    expect(source('WebhookInbox')).toContain('func NewWebhookInbox(scope constructs.Construct, id *string, props *WebhookInboxProps) WebhookInbox {');
    const struct = /\ntype WebhookInboxProps struct \{([\s\S]*?)\n\}/.exec(source('WebhookInboxProps'));
    expect(struct).not.toBeNull();
    const fields = [...struct![1].matchAll(/^\t(\w+) \S+ `field:"\w+" json:"(\w+)"/gm)].map(([, field, json]) => [json, field]);
    expect(fields.sort()).toEqual(props.map((prop) => [prop, pascalCase(prop)]).sort());
  });
});
