/**
 * The aws-cdk-lib range the package declares is the range it works in: the example app
 * (bin/app.ts, with cdk-nag's checks) is synthesized as the CDK CLI runs it, once with the newest
 * aws-cdk-lib (the devDependency) and once with the oldest the peer range admits (the
 * devDependency alias `aws-cdk-lib-oldest`, loaded in place of aws-cdk-lib by a preload), and the
 * two templates must be the same template.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { synthesizeProject } from '#twin/testing';

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

const scratch = mkdtempSync(join(tmpdir(), 'webhook-inbox-cdk-versions-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The example app synthesized into its own folder, with NODE_OPTIONS for the app's processes. */
function synthesize(name: string, nodeOptions: string): { template: Template; version: string; nag: unknown[] } {
  const outdir = synthesizeProject(ROOT, join(scratch, name), { NODE_OPTIONS: nodeOptions });
  const template = JSON.parse(readFileSync(join(outdir, `${STACK}.template.json`), 'utf8')) as Template;
  // Each construct's info in the tree names the aws-cdk-lib release that built it.
  const tree = JSON.parse(readFileSync(join(outdir, 'tree.json'), 'utf8')) as { tree: { children: Record<string, { constructInfo: { version: string } }> } };
  // cdk-nag's AwsSolutions checks run as a validation plugin; their report is written beside.
  const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) as {
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
  const newest = synthesize('newest', process.env.NODE_OPTIONS ?? '');
  const oldest = synthesize('oldest', `${process.env.NODE_OPTIONS ?? ''} --require ${join(ROOT, 'test', 'support', 'aws-cdk-lib-oldest.cjs')}`.trim());
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
  // Two synths of the app, each a ts-node process: about 10 s alone, several times that on a loaded machine.
}, 240_000);
