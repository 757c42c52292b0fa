/**
 * Reads what `cdk synth` wrote: the stacks of a cloud assembly (`cdk.out`, nested stage
 * assemblies included) or one template file, with where each Lambda function's asset is.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';

/** A resource as a template holds it. */
export interface TemplateResource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
  readonly Metadata?: Record<string, unknown>;
  readonly DependsOn?: string | string[];
  readonly Condition?: string;
}

export interface StackTemplate {
  readonly Resources: Readonly<Record<string, TemplateResource>>;
  readonly Outputs?: Readonly<Record<string, { readonly Value: unknown; readonly Description?: string }>>;
  readonly Parameters?: Readonly<Record<string, { readonly Type: string; readonly Default?: unknown }>>;
}

/** One stack to run: its name, its template, and the folder its assets are relative to. */
export interface SynthesizedStack {
  readonly stackName: string;
  readonly template: StackTemplate;
  /** The folder `aws:asset:path` metadata is relative to (the assembly's, or the template file's). */
  readonly assetRoot: string;
}

interface ManifestArtifact {
  readonly type: string;
  readonly properties?: { readonly templateFile?: string; readonly stackName?: string; readonly directoryName?: string };
  readonly displayName?: string;
}

export class AssemblyError extends Error {
  override readonly name = 'AssemblyError';
}

/**
 * The stacks at `path`: a cloud assembly folder (every stack, stages included) or a template
 * file; `stackNames` keeps only those (by stack name or display path), and naming one that is
 * not there is an error listing the ones that are.
 */
export function loadStacks(path: string, stackNames: readonly string[] = []): SynthesizedStack[] {
  const at = resolve(path);
  if (!existsSync(at)) throw new AssemblyError(`${path}: no such file or folder (synthesize first: npx cdk synth)`);
  const found = statSync(at).isDirectory() ? stacksOfAssembly(at) : [{ stackName: stackNameOfFile(at), displayName: stackNameOfFile(at), ...templateFile(at) }];
  if (found.length === 0) throw new AssemblyError(`${path}: the assembly holds no stack`);
  if (stackNames.length === 0) return found.map(({ displayName: _displayName, ...stack }) => stack);
  return stackNames.map((wanted) => {
    const stack = found.find((candidate) => candidate.stackName === wanted || candidate.displayName === wanted);
    if (!stack) throw new AssemblyError(`no stack "${wanted}" in ${path}; it holds ${found.map((candidate) => candidate.displayName).join(', ')}`);
    const { displayName: _displayName, ...chosen } = stack;
    return chosen;
  });
}

/** `Answers/Verifier` for a function at `Stack/Answers/Verifier/Resource`; its logical id where the template has no construct path. */
export function constructPath(stack: Pick<SynthesizedStack, 'stackName'>, logicalId: string, resource: TemplateResource): string {
  const path = resource.Metadata?.['aws:cdk:path'];
  if (typeof path !== 'string') return logicalId;
  return path.replace(new RegExp(`^${stack.stackName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/`), '').replace(/\/Resource$/, '');
}

/** The asset folder of a resource whose `aws:asset:property` is `property` (e.g. a function's `Code`). */
export function assetPathOf(stack: SynthesizedStack, resource: TemplateResource, property: string): string | undefined {
  const metadata = resource.Metadata ?? {};
  if (metadata['aws:asset:property'] !== property || typeof metadata['aws:asset:path'] !== 'string') return undefined;
  const assetPath = metadata['aws:asset:path'];
  return isAbsolute(assetPath) ? assetPath : join(stack.assetRoot, assetPath);
}

function stacksOfAssembly(folder: string): (SynthesizedStack & { displayName: string })[] {
  const manifestPath = join(folder, 'manifest.json');
  if (!existsSync(manifestPath)) throw new AssemblyError(`${folder} is not a cloud assembly (no manifest.json)`);
  let manifest: { artifacts?: Record<string, ManifestArtifact> };
  try {
    manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as typeof manifest;
  } catch (error) {
    throw new AssemblyError(`${manifestPath}: not a JSON manifest (${(error as Error).message})`);
  }
  return Object.entries(manifest.artifacts ?? {}).flatMap(([id, artifact]) => {
    if (artifact.type === 'cdk:cloud-assembly' && artifact.properties?.directoryName) return stacksOfAssembly(join(folder, artifact.properties.directoryName));
    if (artifact.type !== 'aws:cloudformation:stack' || !artifact.properties?.templateFile) return [];
    const stackName = artifact.properties.stackName ?? id;
    return [{ stackName, displayName: artifact.displayName ?? stackName, ...templateFile(join(folder, artifact.properties.templateFile)) }];
  });
}

function templateFile(file: string): { template: StackTemplate; assetRoot: string } {
  let template: StackTemplate;
  try {
    template = JSON.parse(readFileSync(file, 'utf8')) as StackTemplate;
  } catch (error) {
    throw new AssemblyError(`${file}: not a JSON template (${(error as Error).message})`);
  }
  if (typeof template?.Resources !== 'object' || template.Resources === null) throw new AssemblyError(`${file}: a template needs Resources`);
  return { template, assetRoot: dirname(file) };
}

function stackNameOfFile(file: string): string {
  return file.replace(/^.*[\\/]/, '').replace(/\.template\.json$|\.json$/, '');
}
