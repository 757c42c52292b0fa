/**
 * The example app (bin/app.ts) synthesized as the CDK CLI runs it (cdk.json's `app` command), with
 * the newest aws-cdk-lib or the oldest the peer range admits, read through the template cache: each
 * is synthesized once per code however many test files read it (the deploy limits, the aws-cdk-lib
 * range). The cache key holds what the template cache keys by (bin/app.ts, lib/, assets/, the
 * aws-cdk-lib and constructs releases) and what else goes into this synthesis: cdk.json, the
 * TypeScript settings the app is run with, the preload, and the cdk-nag and oldest aws-cdk-lib
 * releases.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { synthesizeProject } from '#twin/testing';
import { cachedSynthesis } from './template-cache';

const ROOT = join(__dirname, '..', '..');

/** Preloaded with `--require`, it loads the oldest aws-cdk-lib in place of the newest. */
const OLDEST_PRELOAD = join(ROOT, 'test', 'support', 'aws-cdk-lib-oldest.cjs');

export type CdkRelease = 'newest' | 'oldest';

/** The assembly files the tests read, by name, as text: every `*.template.json`, `tree.json` and `validation-report.json`. */
export type ExampleAssembly = Readonly<Record<string, string>>;

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const versionOf = (name: string) => (JSON.parse(read(join('node_modules', name, 'package.json'))) as { version: string }).version;

/** The example app's assembly, synthesized with `release` of aws-cdk-lib. */
export function exampleAssembly(release: CdkRelease): ExampleAssembly {
  const nodeOptions = [process.env.NODE_OPTIONS ?? '', release === 'oldest' ? `--require ${OLDEST_PRELOAD}` : ''].join(' ').trim();
  const spec = {
    release,
    nodeOptions,
    cdkJson: read('cdk.json'),
    tsconfig: read('tsconfig.dev.json'),
    preload: read('test/support/aws-cdk-lib-oldest.cjs'),
    releases: ['cdk-nag', 'aws-cdk-lib-oldest'].map((name) => `${name}@${versionOf(name)}`),
  };
  return cachedSynthesis('bin/app.ts', spec, () => {
    const scratch = mkdtempSync(join(tmpdir(), `webhook-inbox-example-${release}-`));
    try {
      const outdir = synthesizeProject(ROOT, join(scratch, 'cdk.out'), { NODE_OPTIONS: nodeOptions });
      const files = readdirSync(outdir).filter((file) => file.endsWith('.template.json') || file === 'tree.json' || file === 'validation-report.json');
      return Object.fromEntries(files.map((file) => [file, readFileSync(join(outdir, file), 'utf8')]));
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
}
