/**
 * Cold start: each handler bundle (assets/<name>/index.mjs and the chunks it imports statically)
 * by size and by module-load time in a fresh Node process, beside a naive handler
 * (bench/naive-handler.cjs) that loads the same AWS SDK v3 clients unbundled from node_modules:
 * every client the bundle can use, also those in the chunks it loads only on first use (the S3
 * client of large bodies), since a naive handler imports its clients at the top; and, for
 * reference, only the clients the bundle loads at start. Each sample is a new process that times
 * only the loading of the module as Lambda's runtime loads it (an `.mjs` imported, a `.cjs`
 * required; its top-level code included: clients and stores are built at load); the samples
 * alternate, and the figure is the median.
 *
 * Source maps: the same bundle built with the source map the assets once carried
 * (scripts/bundle-options.ts's options with `sourcemap: true`, no sources content) into a
 * scratch folder, its maps those of the files loaded at start, loaded with `--enable-source-maps` (what `NODE_OPTIONS=--enable-source-maps`
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
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { Metafile } from 'esbuild';
import { AdapterKind, HANDLER_FILE, HANDLER_NODE_MAJOR, providerRuntimeConfig } from '../lib/contract';
import { handlerBundleOptions, loadedAtStart, ROOT } from '../scripts/bundle-options';
import { handlerEnvironments, handlerSettingsWithDefaults, rotatorEnvironment } from '../lib/private/handler-environment';
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
  /** What a cold start loads: the entry and the chunks it imports statically. */
  readonly bundleKb: number;
  readonly filesAtStart: number;
  /** The chunks loaded only when a dynamic import runs (the S3 client, unused credential providers). */
  readonly laterKb: number;
  /** Every SDK client in the bundle and its chunks, which the naive handler loads. */
  readonly clients: string[];
  /** The SDK clients in what a cold start loads. */
  readonly clientsAtStart: string[];
  /** Median module-load milliseconds. */
  readonly bundleLoadMs: number;
  readonly naiveLoadMs: number;
  /** The naive handler loading only `clientsAtStart`. */
  readonly naiveAtStartLoadMs: number;
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

// As Lambda's Node.js runtime loads a handler: an ES module (.mjs) imported, CommonJS required.
const LOADER = [
  "const { performance } = require('node:perf_hooks');",
  "const { pathToFileURL } = require('node:url');",
  'const path = process.argv[1];',
  'const t0 = performance.now();',
  "const loading = path.endsWith('.mjs') ? import(pathToFileURL(path).href) : require(path);",
  'Promise.resolve(loading).then((handlerModule) => {',
  '  const ms = performance.now() - t0;',
  "  if (process.argv[2] !== 'stack') return process.stdout.write(JSON.stringify({ ms }));",
  '  return handlerModule.handler(undefined, {}).then(',
  "    () => { throw new Error('the handler accepted no event'); },",
  '    (error) => {',
  '      if (!(error instanceof TypeError)) throw new Error(`expected a TypeError from the missing event, got ${error}`);',
  '      const t1 = performance.now();',
  "      if (!error.stack) throw new Error('no stack');",
  '      process.stdout.write(JSON.stringify({ ms, stackMs: performance.now() - t1 }));',
  '    },',
  '  );',
  '});',
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

/** The handler bundled as scripts/bundle.ts bundles it, with its source maps, into `dir`; the maps' size of the files loaded at start. */
async function bundleWithSourceMap(name: HandlerName, dir: string): Promise<{ path: string; mapKb: number }> {
  const outdir = join(dir, name);
  const result = await build(handlerBundleOptions(name, { outdir, sourcemap: true, sourcesContent: false, logLevel: 'silent' }));
  const mapBytes = loadedAtStart(result.metafile!, name).reduce((sum, path) => sum + statSync(resolve(`${path}.map`)).size, 0);
  return { path: join(outdir, HANDLER_FILE), mapKb: mapBytes / 1024 };
}

/** The package group of a bundled input. */
function groupOf(path: string): string {
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  const group = match ? match[1] : `our code (${path.split('/')[0]}/)`;
  if (group.startsWith('@smithy/')) return '@smithy/* (SDK runtime)';
  if (group.startsWith('@aws-sdk/') && !group.startsWith('@aws-sdk/client-')) return '@aws-sdk/* (SDK core, credentials, middleware)';
  return group;
}

/** The SDK clients (`client-…` packages) with bytes in `outputs`. */
function clientsIn(metafile: Metafile, outputs: string[]): string[] {
  const clients = new Set<string>();
  for (const output of outputs)
    for (const [path, input] of Object.entries(metafile.outputs[output].inputs)) {
      const group = groupOf(path);
      if (input.bytesInOutput > 0 && group.startsWith('@aws-sdk/client-')) clients.add(group.slice('@aws-sdk/'.length));
    }
  return [...clients].sort();
}

interface Composition {
  readonly shares: BundleShare[];
  readonly kbAtStart: number;
  readonly filesAtStart: number;
  readonly laterKb: number;
  readonly clients: string[];
  readonly clientsAtStart: string[];
}

/** What fills the bundle, from the metafile of an in-memory rebuild with scripts/bundle.ts's own options. */
async function composition(name: HandlerName): Promise<Composition> {
  const { metafile } = await build(handlerBundleOptions(name, { write: false, logLevel: 'silent' }));
  const atStart = loadedAtStart(metafile!, name);
  const all = Object.keys(metafile!.outputs);
  const byPackage = new Map<string, number>();
  for (const output of atStart)
    for (const [path, input] of Object.entries(metafile!.outputs[output].inputs))
      byPackage.set(groupOf(path), (byPackage.get(groupOf(path)) ?? 0) + input.bytesInOutput);
  const total = [...byPackage.values()].reduce((sum, bytes) => sum + bytes, 0);
  const shares = [...byPackage.entries()].sort((a, b) => b[1] - a[1]).map(([group, bytes]) => ({ name: group, kb: bytes / 1024, share: bytes / total }));
  const later = all.filter((output) => !atStart.includes(output));
  return {
    shares,
    kbAtStart: atStart.reduce((sum, output) => sum + metafile!.outputs[output].bytes, 0) / 1024,
    filesAtStart: atStart.length,
    laterKb: later.reduce((sum, output) => sum + metafile!.outputs[output].bytes, 0) / 1024,
    clients: clientsIn(metafile!, all),
    clientsAtStart: clientsIn(metafile!, atStart),
  };
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
    conditions: `median of ${samples} fresh \`node\` processes each (alternating), timing the module's load as Lambda's runtime loads it (an \`.mjs\` imported, a \`.cjs\` required; its top-level code included), files in the page cache; Node ${process.versions.node} here, Lambda runs Node ${HANDLER_NODE_MAJOR}`,
  };
}

/** One handler's row: the shipped bundle, the naive handler and the bundle with source maps, interleaved. */
async function measureHandler(handler: HandlerName, naive: string, scratch: string, samples: number): Promise<ColdStartRow> {
  const bundle = join(ROOT, 'assets', handler, HANDLER_FILE);
  if (!existsSync(bundle)) throw new Error(`${bundle} is missing: run npm run bundle first`);
  const { shares, kbAtStart, filesAtStart, laterKb, clients, clientsAtStart } = await composition(handler);
  const mapped = await bundleWithSourceMap(handler, scratch);
  const probe = STACK_PROBES.includes(handler);
  const loads: Array<[path: string, environment: Record<string, string>, flags: string[], stackProbe: boolean, samples: LoadSample[]]> = [
    [bundle, handlerEnvironment(handler), [], probe, []],
    [naive, { NAIVE_CLIENTS: clients.join(',') }, [], false, []],
    [mapped.path, handlerEnvironment(handler), ['--enable-source-maps'], probe, []],
    [naive, { NAIVE_CLIENTS: clientsAtStart.join(',') }, [], false, []],
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
  const [shipped, naiveLoads, withMaps, naiveAtStart] = loads.map(([, , , , taken]) => taken);
  const bundleLoadMs = median(shipped.map((sample) => sample.ms));
  const naiveLoadMs = median(naiveLoads.map((sample) => sample.ms));
  return {
    handler,
    bundleKb: kbAtStart,
    filesAtStart,
    laterKb,
    clients,
    clientsAtStart,
    bundleLoadMs,
    naiveLoadMs,
    naiveAtStartLoadMs: median(naiveAtStart.map((sample) => sample.ms)),
    ratio: bundleLoadMs / naiveLoadMs,
    sourceMapKb: mapped.mapKb,
    sourceMapsLoadMs: median(withMaps.map((sample) => sample.ms)),
    firstStackMs: probe ? median(shipped.map((sample) => sample.stackMs!)) : Number.NaN,
    sourceMapsFirstStackMs: probe ? median(withMaps.map((sample) => sample.stackMs!)) : Number.NaN,
    composition: shares.slice(0, 6),
  };
}
