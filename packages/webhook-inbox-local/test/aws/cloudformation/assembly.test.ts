/**
 * The twin reads what `cdk synth` wrote: a cloud assembly with its stacks (a stage's from its
 * nested assembly) or a single template file, and where each function's code asset is. The app
 * is synthesized here, as the CDK CLI would synthesize it (with the path and asset metadata).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { App, Stack, Stage } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { AssemblyError, assetPathOf, loadStacks, SynthesizedStack, TemplateResource } from '../../../src/aws/cloudformation/assembly';
import { ASSEMBLY_METADATA_CONTEXT } from '../../../src/twin/synth';

const HANDLER_ID = 'Handler';
const FUNCTION_TYPE = 'AWS::Lambda::Function';

let dir: string;
let outdir: string;

/** A folder holding one handler whose source names `label`, so each asset is told apart by its contents. */
function handlerSource(label: string): string {
  const source = join(dir, `src-${label}`);
  mkdirSync(source);
  writeFileSync(join(source, 'index.js'), `exports.handler = async () => ${JSON.stringify(label)};\n`);
  return source;
}

function addHandler(stack: Stack, source: string): void {
  new lambda.Function(stack, HANDLER_ID, { runtime: lambda.Runtime.NODEJS_22_X, handler: 'index.handler', code: lambda.Code.fromAsset(source) });
}

/** The one function of a stack's template. */
function functionOf(stack: SynthesizedStack): TemplateResource {
  const functions = Object.values(stack.template.Resources).filter((resource) => resource.Type === FUNCTION_TYPE);
  expect(functions).toHaveLength(1);
  return functions[0];
}

function assemblyError(run: () => unknown): AssemblyError {
  try {
    run();
  } catch (error) {
    if (error instanceof AssemblyError) return error;
    throw error;
  }
  throw new Error('expected an AssemblyError');
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'assembly-'));
  outdir = join(dir, 'cdk.out');
  const app = new App({ outdir, context: { ...ASSEMBLY_METADATA_CONTEXT } });
  // A stack named apart from its construct id: picked by either.
  addHandler(new Stack(app, 'First', { stackName: 'first-service' }), handlerSource('first'));
  const second = new Stack(app, 'Second');
  // Assets read where they are, as `cdk synth` does for a project that disables staging.
  second.node.setContext('aws:cdk:disable-asset-staging', true);
  addHandler(second, handlerSource('second'));
  addHandler(new Stack(new Stage(app, 'Prod'), 'Third'), handlerSource('third'));
  app.synth();
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a cloud assembly', () => {
  test('holds every stack, the stage’s from its nested assembly, each with its template and asset root', () => {
    const stacks = loadStacks(outdir);
    expect(stacks.map((stack) => stack.stackName).sort()).toEqual(['Prod-Third', 'Second', 'first-service']);
    const byName = new Map(stacks.map((stack) => [stack.stackName, stack]));
    expect(byName.get('first-service')!.assetRoot).toBe(outdir);
    expect(byName.get('Second')!.assetRoot).toBe(outdir);
    expect(byName.get('Prod-Third')!.assetRoot).toBe(join(outdir, 'assembly-Prod'));
    for (const stack of stacks) expect(functionOf(stack).Properties).toMatchObject({ Handler: 'index.handler', Runtime: 'nodejs22.x' });
  });

  test('picks stacks by stack name or by display path, in the order asked', () => {
    expect(loadStacks(outdir, ['first-service']).map((stack) => stack.stackName)).toEqual(['first-service']);
    expect(loadStacks(outdir, ['First']).map((stack) => stack.stackName)).toEqual(['first-service']);
    expect(loadStacks(outdir, ['Prod/Third', 'Second']).map((stack) => stack.stackName)).toEqual(['Prod-Third', 'Second']);
    expect(loadStacks(outdir, ['Prod-Third'])[0].assetRoot).toBe(join(outdir, 'assembly-Prod'));
  });

  test('a stack it does not hold is an error naming the ones it does', () => {
    const error = assemblyError(() => loadStacks(outdir, ['Fourth']));
    expect(error.message).toContain('no stack "Fourth"');
    for (const shown of ['First', 'Second', 'Prod/Third']) expect(error.message).toContain(shown);
  });
});

describe("a function's code asset", () => {
  test('staged into the assembly: relative to it, the stage’s one level up', () => {
    for (const [name, label] of [
      ['first-service', 'first'],
      ['Prod-Third', 'third'],
    ] as const) {
      const [stack] = loadStacks(outdir, [name]);
      const asset = assetPathOf(stack, functionOf(stack), 'Code')!;
      expect(asset.startsWith(`${join(outdir, 'asset.')}`)).toBe(true);
      expect(readFileSync(join(asset, 'index.js'), 'utf8')).toContain(JSON.stringify(label));
    }
  });

  test('with asset staging disabled: the absolute source folder', () => {
    const [stack] = loadStacks(outdir, ['Second']);
    const asset = assetPathOf(stack, functionOf(stack), 'Code')!;
    expect(isAbsolute(asset)).toBe(true);
    expect(asset).toBe(join(dir, 'src-second'));
  });

  test('only for the property the asset is of', () => {
    const [stack] = loadStacks(outdir, ['Second']);
    expect(assetPathOf(stack, functionOf(stack), 'Layers')).toBeUndefined();
    expect(assetPathOf(stack, { Type: FUNCTION_TYPE }, 'Code')).toBeUndefined();
  });
});

describe('a template file', () => {
  test('is one stack named after the file, its assets relative to the file’s folder', () => {
    const [stack, ...others] = loadStacks(join(outdir, 'Second.template.json'));
    expect(others).toEqual([]);
    expect(stack.stackName).toBe('Second');
    expect(stack.assetRoot).toBe(outdir);
    expect(functionOf(stack).Type).toBe(FUNCTION_TYPE);
  });

  test('a plain .json file is named without its extension', () => {
    const file = join(dir, 'orders.json');
    writeFileSync(file, JSON.stringify({ Resources: { Queue: { Type: 'AWS::SQS::Queue' } } }));
    expect(loadStacks(file)).toEqual([{ stackName: 'orders', template: { Resources: { Queue: { Type: 'AWS::SQS::Queue' } } }, assetRoot: dir }]);
  });
});

describe('what is not an assembly', () => {
  test('a missing path says to synthesize first', () => {
    const missing = join(dir, 'nowhere');
    expect(assemblyError(() => loadStacks(missing)).message).toBe(`${missing}: no such file or folder (synthesize first: npx cdk synth)`);
  });

  test('a folder without manifest.json', () => {
    const folder = join(dir, 'empty');
    mkdirSync(folder);
    expect(assemblyError(() => loadStacks(folder)).message).toBe(`${folder} is not a cloud assembly (no manifest.json)`);
  });

  test('a manifest.json that is not JSON', () => {
    const folder = join(dir, 'torn');
    mkdirSync(folder);
    writeFileSync(join(folder, 'manifest.json'), '{"version": "4');
    expect(assemblyError(() => loadStacks(folder)).message.startsWith(`${join(folder, 'manifest.json')}: not a JSON manifest (`)).toBe(true);
  });

  test('a file that is not JSON', () => {
    const file = join(dir, 'notes.txt');
    writeFileSync(file, 'Resources: yes\n');
    expect(assemblyError(() => loadStacks(file)).message.startsWith(`${file}: not a JSON template (`)).toBe(true);
  });

  test('JSON without Resources', () => {
    const file = join(dir, 'outputs.json');
    writeFileSync(file, JSON.stringify({ Outputs: {} }));
    expect(assemblyError(() => loadStacks(file)).message).toBe(`${file}: a template needs Resources`);
  });

  test('an assembly without a stack', () => {
    const folder = join(dir, 'stackless');
    mkdirSync(folder);
    writeFileSync(join(folder, 'manifest.json'), JSON.stringify({ version: '48.0.0', artifacts: { Tree: { type: 'cdk:tree' } } }));
    expect(assemblyError(() => loadStacks(folder)).message).toBe(`${folder}: the assembly holds no stack`);
  });
});
