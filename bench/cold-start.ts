/**
 * Cold start: each handler bundle (assets/<name>/index.js) by size and by module-load time in a
 * fresh Node process, beside a naive handler (bench/naive-handler.cjs) that loads the same AWS
 * SDK v3 clients unbundled from node_modules. Each sample is a new process that times only the
 * `require` of the module (its top-level code included: clients and stores are built at load);
 * the samples of the two alternate, and the figure is the median.
 *
 * What fills each bundle comes from esbuild's metafile, built in memory with the options of
 * scripts/bundle.ts, grouped by package.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { AdapterKind, HANDLER_NODE_MAJOR, providerRuntimeConfig } from '../lib/contract';
import { bundleOptions, ROOT } from '../scripts/bundle-options';
import { handlerEnvironments, handlerSettingsWithDefaults, rotatorEnvironment } from '../lib/handler-environment';
import { median } from './stats';

export const HANDLERS = ['verifier', 'processor', 'reconciler', 'rotator'] as const;
export type HandlerName = (typeof HANDLERS)[number];

export interface BundleShare {
  readonly name: string;
  readonly kb: number;
  readonly share: number;
}

export interface ColdStartRow {
  readonly handler: HandlerName;
  readonly bundleKb: number;
  /** The SDK clients inside the bundle, which the naive handler loads too. */
  readonly clients: string[];
  /** Median module-load milliseconds. */
  readonly bundleLoadMs: number;
  readonly naiveLoadMs: number;
  /** bundle ÷ naive. */
  readonly ratio: number;
  /** What fills the bundle, largest first. */
  readonly composition: BundleShare[];
}

export interface ColdStartResult {
  readonly rows: ColdStartRow[];
  readonly samples: number;
  readonly conditions: string;
}

/** The environment a handler's module needs to load (the construct sets it; names only here). */
function handlerEnvironment(name: HandlerName): Record<string, string> {
  const secretId = 'arn:aws:secretsmanager:us-east-1:000000000000:secret:bench';
  // The rotator is not one of the inbox's handlers: it has an environment of its own.
  if (name === 'rotator') return rotatorEnvironment('bench', [{ secretId, providerName: 'answerline', format: 'whsec' }]);
  return handlerEnvironments(
    handlerSettingsWithDefaults({
      inboxName: 'bench',
      inboxTable: 'bench-inbox',
      resultsTable: 'bench-results',
      workQueueUrl: 'https://sqs.us-east-1.amazonaws.com/000000000000/bench-work',
      providers: [providerRuntimeConfig({ name: 'answerline', adapter: AdapterKind.ANSWERLINE, secretId })],
      bodyBucket: 'bench-bodies',
      effectBusName: 'bench-bus',
    }),
  )[name];
}

const LOADER = [
  "const { performance } = require('node:perf_hooks');",
  'const t0 = performance.now();',
  'require(process.argv[1]);',
  'process.stdout.write(JSON.stringify({ ms: performance.now() - t0 }));',
].join('\n');

/** Loads `modulePath` in a new Node process; the milliseconds its `require` took. */
function loadOnce(modulePath: string, environment: Record<string, string>): number {
  const out = spawnSync(process.execPath, ['-e', LOADER, modulePath], {
    env: {
      PATH: process.env.PATH ?? '',
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      NODE_NO_WARNINGS: '1',
      ...environment,
    },
    encoding: 'utf8',
    cwd: ROOT,
  });
  if (out.status !== 0) throw new Error(`loading ${modulePath} failed: ${out.stderr.slice(-600)}`);
  return (JSON.parse(out.stdout) as { ms: number }).ms;
}

/** What fills the bundle, from the metafile of an in-memory rebuild with scripts/bundle.ts's own options. */
async function composition(name: HandlerName): Promise<{ shares: BundleShare[]; clients: string[] }> {
  const result = await build(bundleOptions(`lambda/${name}/index.ts`, `assets/${name}/index.js`, { write: false, sourcemap: false, logLevel: 'silent' }));
  const output = Object.values(result.metafile!.outputs).find((entry) => entry.entryPoint)!;
  const byPackage = new Map<string, number>();
  for (const [path, input] of Object.entries(output.inputs)) {
    const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
    let group = match ? match[1] : `our code (${path.split('/')[0]}/)`;
    if (group.startsWith('@smithy/')) group = '@smithy/* (SDK runtime)';
    else if (group.startsWith('@aws-sdk/') && !group.startsWith('@aws-sdk/client-')) group = '@aws-sdk/* (SDK core, credentials, middleware)';
    byPackage.set(group, (byPackage.get(group) ?? 0) + input.bytesInOutput);
  }
  const total = [...byPackage.values()].reduce((sum, bytes) => sum + bytes, 0);
  const shares = [...byPackage.entries()].sort((a, b) => b[1] - a[1]).map(([group, bytes]) => ({ name: group, kb: bytes / 1024, share: bytes / total }));
  const clients = [...byPackage.keys()]
    .filter((group) => group.startsWith('@aws-sdk/client-'))
    .map((group) => group.slice('@aws-sdk/'.length))
    .sort();
  return { shares, clients };
}

export async function measureColdStart(samples: number): Promise<ColdStartResult> {
  const naive = join(__dirname, 'naive-handler.cjs');
  const rows: ColdStartRow[] = [];
  for (const handler of HANDLERS) {
    const bundle = join(ROOT, 'assets', handler, 'index.js');
    if (!existsSync(bundle)) throw new Error(`${bundle} is missing: run npm run bundle first`);
    const { shares, clients } = await composition(handler);
    const loads: Array<[path: string, environment: Record<string, string>, samples: number[]]> = [
      [bundle, handlerEnvironment(handler), []],
      [naive, { NAIVE_CLIENTS: clients.join(',') }, []],
    ];
    // One of each first, untimed: the files are then in the page cache for all.
    for (const [path, env] of loads) loadOnce(path, env);
    for (let i = 0; i < samples; i++) {
      // The order alternates, so that neither always runs first.
      for (let k = 0; k < loads.length; k++) {
        const [path, env, into] = loads[(i + k) % loads.length];
        into.push(loadOnce(path, env));
      }
    }
    const bundleLoadMs = median(loads[0][2]);
    const naiveLoadMs = median(loads[1][2]);
    rows.push({
      handler,
      bundleKb: statSync(bundle).size / 1024,
      clients,
      bundleLoadMs,
      naiveLoadMs,
      ratio: bundleLoadMs / naiveLoadMs,
      composition: shares.slice(0, 6),
    });
  }
  return {
    rows,
    samples,
    conditions: `median of ${samples} fresh \`node\` processes each (alternating), timing the module's require (its top-level code included), files in the page cache; Node ${process.versions.node} here, Lambda runs Node ${HANDLER_NODE_MAJOR}`,
  };
}
