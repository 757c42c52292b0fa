/**
 * The architecture's import boundaries hold together: a file several boundaries cover is held by
 * each of them (in a flat config, a later setting of one rule would replace an earlier one).
 * Each probe is an import a boundary forbids, linted as if it were a file at that path.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** The messages ESLint's own command gives `source` as the file at `path` (its config is ESM: jest cannot load it in-process). */
function refusals(path: string, source: string): string[] {
  const run = spawnSync(join(ROOT, 'node_modules', '.bin', 'eslint'), ['--format', 'json', '--stdin', '--stdin-filename', path], {
    cwd: ROOT,
    input: source,
    encoding: 'utf8',
  });
  const [result] = JSON.parse(run.stdout) as { messages: { message: string }[] }[];
  return result.messages.map((message) => message.message);
}

test.each([
  ['lambda/verifier/probe.ts', "import { App } from 'aws-cdk-lib';", 'no aws-cdk-lib'],
  ['lambda/verifier/probe.ts', "import { sampleSigningSecret } from '../shared/providers/sample-secrets';", 'no handler bundles them'],
  ['lib/contract/probe.ts', "import { Stack } from 'aws-cdk-lib';", 'no aws-cdk-lib'],
  ['lib/contract/probe.ts', "import { handler } from '../../lambda/verifier/index';", 'lib/ is the published construct'],
])('%s: %s is refused (%s)', (path, source, reason) => {
  expect(refusals(path, `${source}\nexport const probe = 1;\n`).join('\n')).toContain(reason);
});
