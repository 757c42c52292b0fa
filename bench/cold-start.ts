/**
 * Cold start: each handler bundle (assets/<name>/index.js) by size and by module-load time in a
 * fresh Node process, beside a naive handler (bench/naive-handler.cjs) that loads the same AWS
 * SDK v3 clients unbundled from node_modules. Each sample is a new process that times only the
 * `require` of the module (its top-level code included: clients and stores are built at load);
 * the samples of the two alternate, and the figure is the median.
 *
 * Source maps: the same bundle built with the source map the assets once carried
 * (scripts/bundle-options.ts's options with `sourcemap: true`, no sources content) into a
 * scratch folder, loaded with `--enable-source-maps` (what `NODE_OPTIONS=--enable-source-maps`
 * does in Lambda), alternating with the others. For the handlers that read their event before any request (STACK_PROBES), each sample then calls the
 * handler with no event and times reading the stack of the TypeError it rejects with: the first
 * stack with a frame in the bundle, when Node parses the bundle's map to map it.
 *
 * What fills each bundle comes from esbuild's metafile, built in memory with the options of
 * scripts/bundle.ts, grouped by package.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
  /** The size of the bundle's source map. */
  readonly sourceMapKb: number;
  /** Median module-load milliseconds of the bundle with its source map, under `--enable-source-maps`. */
  readonly sourceMapsLoadMs: number;
  /**
   * Median milliseconds of reading the first stack with a frame in the bundle, without and with
   * source maps (NaN for the handlers that are no stack probes).
   */
  readonly firstStackMs: number;
  readonly sourceMapsFirstStackMs: number;
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

/** The handlers that reject with a TypeError on no event before they make any request. */
const STACK_PROBES: readonly HandlerName[] = ['verifier', 'processor', 'rotator'];

const LOADER = [
  "const { performance } = require('node:perf_hooks');",
  'const t0 = performance.now();',
  'const handlerModule = require(process.argv[1]);',
  'const ms = performance.now() - t0;',
  "if (process.argv[2] !== 'stack') process.stdout.write(JSON.stringify({ ms }));",
  'else',
  '  handlerModule.handler(undefined, {}).then(',
  "    () => { throw new Error('the handler accepted no event'); },",
  '    (error) => {',
  '      if (!(error instanceof TypeError)) throw new Error(`expected a TypeError from the missing event, got ${error}`);',
  '      const t1 = performance.now();',
  "      if (!error.stack) throw new Error('no stack');",
  '      process.stdout.write(JSON.stringify({ ms, stackMs: performance.now() - t1 }));',
  '    },',
  '  );',
].join('\n');

interface LoadSample {
  /** The milliseconds the `require` took. */
  readonly ms: number;
  /** The milliseconds reading the first stack with a frame in the bundle took (stack probes only). */
  readonly stackMs?: number;
}

/**
 * Loads `modulePath` in a new Node process (with `nodeFlags`), timing its `require` and, with
 * `stackProbe`, the first stack of an error from inside it.
 */
function loadOnce(modulePath: string, environment: Record<string, string>, nodeFlags: string[] = [], stackProbe = false): LoadSample {
  const out = spawnSync(process.execPath, [...nodeFlags, '-e', LOADER, modulePath, ...(stackProbe ? ['stack'] : [])], {
    env: {
      PATH: process.env.PATH ?? '',
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      // Nothing here should make a request; if a handler did, it would reach a closed local port.
      AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
      NODE_NO_WARNINGS: '1',
      ...environment,
    },
    encoding: 'utf8',
    cwd: ROOT,
  });
  if (out.status !== 0) throw new Error(`loading ${modulePath} failed: ${out.stderr.slice(-600)}`);
  return JSON.parse(out.stdout) as LoadSample;
}

/** The handler bundled as scripts/bundle.ts bundles it, with its source map, into `dir`. */
async function bundleWithSourceMap(name: HandlerName, dir: string): Promise<{ path: string; mapKb: number }> {
  const path = join(dir, name, 'index.js');
  await build(
    bundleOptions(`lambda/${name}/index.ts`, `assets/${name}/index.js`, { outfile: path, sourcemap: true, sourcesContent: false, logLevel: 'silent' }),
  );
  return { path, mapKb: statSync(`${path}.map`).size / 1024 };
}

/** What fills the bundle, from the metafile of an in-memory rebuild with scripts/bundle.ts's own options. */
async function composition(name: HandlerName): Promise<{ shares: BundleShare[]; clients: string[] }> {
  const result = await build(bundleOptions(`lambda/${name}/index.ts`, `assets/${name}/index.js`, { write: false, logLevel: 'silent' }));
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
  const scratch = mkdtempSync(join(tmpdir(), 'webhook-inbox-source-maps-'));
  const rows: ColdStartRow[] = [];
  try {
    for (const handler of HANDLERS) rows.push(await measureHandler(handler, naive, scratch, samples));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return {
    rows,
    samples,
    conditions: `median of ${samples} fresh \`node\` processes each (alternating), timing the module's require (its top-level code included), files in the page cache; Node ${process.versions.node} here, Lambda runs Node ${HANDLER_NODE_MAJOR}`,
  };
}

/** One handler's row: the shipped bundle, the naive handler and the bundle with source maps, interleaved. */
async function measureHandler(handler: HandlerName, naive: string, scratch: string, samples: number): Promise<ColdStartRow> {
  const bundle = join(ROOT, 'assets', handler, 'index.js');
  if (!existsSync(bundle)) throw new Error(`${bundle} is missing: run npm run bundle first`);
  const { shares, clients } = await composition(handler);
  const mapped = await bundleWithSourceMap(handler, scratch);
  const probe = STACK_PROBES.includes(handler);
  const loads: Array<[path: string, environment: Record<string, string>, flags: string[], stackProbe: boolean, samples: LoadSample[]]> = [
    [bundle, handlerEnvironment(handler), [], probe, []],
    [naive, { NAIVE_CLIENTS: clients.join(',') }, [], false, []],
    [mapped.path, handlerEnvironment(handler), ['--enable-source-maps'], probe, []],
  ];
  // One of each first, untimed: the files are then in the page cache for all.
  for (const [path, env, flags, stackProbe] of loads) loadOnce(path, env, flags, stackProbe);
  for (let i = 0; i < samples; i++) {
    // The order rotates, so that none always runs first.
    for (let k = 0; k < loads.length; k++) {
      const [path, env, flags, stackProbe, into] = loads[(i + k) % loads.length];
      into.push(loadOnce(path, env, flags, stackProbe));
    }
  }
  const [shipped, naiveLoads, withMaps] = loads.map(([, , , , taken]) => taken);
  const bundleLoadMs = median(shipped.map((sample) => sample.ms));
  const naiveLoadMs = median(naiveLoads.map((sample) => sample.ms));
  return {
    handler,
    bundleKb: statSync(bundle).size / 1024,
    clients,
    bundleLoadMs,
    naiveLoadMs,
    ratio: bundleLoadMs / naiveLoadMs,
    sourceMapKb: mapped.mapKb,
    sourceMapsLoadMs: median(withMaps.map((sample) => sample.ms)),
    firstStackMs: probe ? median(shipped.map((sample) => sample.stackMs!)) : Number.NaN,
    sourceMapsFirstStackMs: probe ? median(withMaps.map((sample) => sample.stackMs!)) : Number.NaN,
    composition: shares.slice(0, 6),
  };
}
