/**
 * `npm start` bundles again only when an input of the bundles changed: the digest of a checkout's
 * inputs ignores what `npm run compile` writes beside the sources in lib/ (a build then a start
 * must not bundle twice), and follows any change to a source.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { bundleInputsDigest } from '../../scripts/bundle-inputs';

let root: string;
const write = (path: string, content: string) => {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), content);
};

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'bundle-inputs-'));
  write('lib/contract/defaults.ts', 'export const A = 1;\n');
  write('lambda/processor/index.ts', 'export const handler = 1;\n');
  write('package-lock.json', '{}\n');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

test("jsii's JavaScript, declarations and build record in lib/ leave the digest as it was", () => {
  const before = bundleInputsDigest(root);
  write('lib/contract/defaults.js', 'exports.A = 1;\n');
  write('lib/contract/defaults.d.ts', 'export declare const A = 1;\n');
  write('lib/tsconfig.tsbuildinfo', '{"program":{}}\n');
  expect(bundleInputsDigest(root)).toBe(before);
});

test('a changed, added or removed source changes it', () => {
  const before = bundleInputsDigest(root);
  write('lib/contract/defaults.ts', 'export const A = 2;\n');
  const changed = bundleInputsDigest(root);
  expect(changed).not.toBe(before);
  write('lambda/processor/pace.ts', 'export const pace = 1;\n');
  const added = bundleInputsDigest(root);
  expect(added).not.toBe(changed);
  rmSync(join(root, 'lambda/processor/pace.ts'));
  expect(bundleInputsDigest(root)).toBe(changed);
  write('package-lock.json', '{"lockfileVersion":3}\n');
  expect(bundleInputsDigest(root)).not.toBe(changed);
});
