/**
 * Synthesizes a CDK app the way the CDK CLI does: its `app` command (from `cdk.json`) run with
 * `CDK_OUTDIR` set, so the twin runs the same cloud assembly `cdk deploy` would deploy.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The context the CDK CLI sets so that a template's resources say which asset and which construct they are. */
export const ASSEMBLY_METADATA_CONTEXT = { 'aws:cdk:enable-path-metadata': true, 'aws:cdk:enable-asset-metadata': true } as const;

export class SynthesisError extends Error {
  override readonly name = 'SynthesisError';
}

/** Runs the app of the CDK project in `projectDir` into `outdir` (with `environment` added to the app's); returns `outdir`. */
export function synthesizeProject(projectDir: string, outdir: string, environment: Record<string, string> = {}): string {
  const cdkJson = join(projectDir, 'cdk.json');
  if (!existsSync(cdkJson)) throw new SynthesisError(`${projectDir} has no cdk.json: pass a synthesized assembly with --app cdk.out`);
  const { app, context } = JSON.parse(readFileSync(cdkJson, 'utf8')) as { app?: string; context?: Record<string, unknown> };
  if (!app) throw new SynthesisError(`${cdkJson} names no "app" command`);
  // What the CLI passes: the project's context, and the metadata that says where each asset and construct is.
  const contextJson = JSON.stringify({ ...context, ...ASSEMBLY_METADATA_CONTEXT });
  const result = spawnSync(app, {
    cwd: projectDir,
    shell: true,
    env: { ...process.env, ...environment, CDK_OUTDIR: outdir, CDK_CONTEXT_JSON: contextJson },
    encoding: 'utf8',
  });
  if (result.status !== 0) {
    throw new SynthesisError(
      `synthesizing ${projectDir} failed (exit ${result.status}): ${(result.stderr || result.stdout).trim().split('\n').slice(-5).join(' | ')}`,
    );
  }
  return outdir;
}
