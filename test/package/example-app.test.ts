/**
 * The example app (bin/app.ts) as a user runs it: `cdk synth` with the CDK CLI, offline, with no
 * AWS credentials. A process of its own (the CLI, then the app through ts-node), so it lives with
 * the package's tests rather than the construct's pure ones.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

test('the example app synthesizes offline with the cdk CLI', () => {
  const outdir = mkdtempSync(join(tmpdir(), 'cdk-webhook-inbox-example-'));
  try {
    const out = execFileSync('npx', ['cdk', 'synth', '--no-notices', '--quiet', '-o', outdir], {
      encoding: 'utf8',
      env: { ...process.env, CDK_DISABLE_CLI_TELEMETRY: 'true', AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '' },
    });
    expect(out).not.toMatch(/ERROR/);
    const template = JSON.parse(readFileSync(join(outdir, 'WebhookInboxExample.template.json'), 'utf8')) as { Resources: Record<string, { Type: string }> };
    expect(Object.values(template.Resources).some((resource) => resource.Type === 'AWS::ApiGatewayV2::Api')).toBe(true);
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
});
