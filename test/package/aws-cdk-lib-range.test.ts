/**
 * The aws-cdk-lib range the package declares is the range it works in: the example app
 * (bin/app.ts, with cdk-nag's checks) is synthesized as the CDK CLI runs it, once with the newest
 * aws-cdk-lib (the devDependency) and once with the oldest the peer range admits (the
 * devDependency alias `aws-cdk-lib-oldest`, loaded in place of aws-cdk-lib by a preload), and the
 * two templates must be the same template.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CdkRelease, exampleAssembly } from '../support/example-app';

const ROOT = join(__dirname, '..', '..');
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  peerDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const installed = (name: string) => (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

const floor = /^\^(2\.\d+\.\d+)$/.exec(manifest.peerDependencies['aws-cdk-lib'])?.[1];
const STACK = 'WebhookInboxExample';

interface Template {
  Resources: Record<string, { Type: string; Properties?: unknown }>;
  [section: string]: unknown;
}

/** The example app synthesized with `release` of aws-cdk-lib: its template, the release its tree names, cdk-nag's report. */
function synthesize(release: CdkRelease): { template: Template; version: string; nag: unknown[] } {
  const assembly = exampleAssembly(release);
  const template = JSON.parse(assembly[`${STACK}.template.json`]) as Template;
  // Each construct's info in the tree names the aws-cdk-lib release that built it.
  const tree = JSON.parse(assembly['tree.json']) as { tree: { children: Record<string, { constructInfo: { version: string } }> } };
  // cdk-nag's AwsSolutions checks run as a validation plugin; their report is written beside.
  const report = JSON.parse(assembly['validation-report.json']) as {
    pluginReports: Array<{ pluginName: string; conclusion: string; violations: unknown[] }>;
  };
  const nag = report.pluginReports.map(({ pluginName, conclusion, violations }) => ({ pluginName, conclusion, violations }));
  return { template, version: tree.tree.children[STACK].constructInfo.version, nag };
}

test('the peer range starts at the oldest release installed for the tests, and the newest is the one the package builds with', () => {
  expect(manifest.peerDependencies['aws-cdk-lib']).toMatch(/^\^2\.\d+\.\d+$/);
  expect(manifest.devDependencies['aws-cdk-lib-oldest']).toBe(`npm:aws-cdk-lib@${floor}`);
  expect(installed('aws-cdk-lib-oldest')).toBe(floor);
  expect(installed('aws-cdk-lib')).toBe(manifest.devDependencies['aws-cdk-lib']);
});

test('the example app, cdk-nag included, synthesizes the same template with the oldest and the newest aws-cdk-lib', () => {
  const newest = synthesize('newest');
  const oldest = synthesize('oldest');
  expect([newest.version, oldest.version]).toEqual([installed('aws-cdk-lib'), floor]);
  // With either, cdk-nag finds nothing the construct does not acknowledge.
  for (const { nag } of [newest, oldest]) expect(nag).toEqual([{ pluginName: 'AwsSolutions', conclusion: 'success', violations: [] }]);

  // Logical ids are the construct's public contract: every resource, of the same type, in both.
  const types = (template: Template) => Object.fromEntries(Object.entries(template.Resources).map(([id, resource]) => [id, resource.Type]));
  expect(types(oldest.template)).toEqual(types(newest.template));
  // Properties equal resource by resource, outputs and the other sections too. One difference
  // between these releases is known and harmless: newer releases write the dashboard's text
  // widgets with `"background":"transparent"`, their default look in the console.
  const comparable = (template: Template) => JSON.parse(JSON.stringify(template).replaceAll(String.raw`,\"background\":\"transparent\"`, '')) as Template;
  expect(comparable(oldest.template)).toEqual(comparable(newest.template));
  // Two synths of the app (unless cached), each a ts-node process: about 10 s alone, several times that on a loaded machine.
}, 240_000);
