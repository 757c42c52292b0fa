// Lint and the architecture's boundaries, run by `npm test` (`npm run lint`).
import { builtinRules } from 'eslint/use-at-your-own-risk';
import tseslint from 'typescript-eslint';

/** An import of any of these modules, from any depth. */
const anyDepth = (...folders) => folders.flatMap((folder) => [`${folder}`, `${folder}/*`, `**/${folder}`, `**/${folder}/*`, `**/${folder}/**`]);

/**
 * Files whose imports the given rules restrict, each rule a group of patterns and the message that
 * says why (a glob starting with ! leaves files out). Each boundary is a rule of its own (a copy of
 * no-restricted-imports): in a flat config a later setting of one rule replaces an earlier one for
 * the files both match, so boundaries sharing the rule would silently drop each other where their
 * files overlap.
 */
const restrictedImports = builtinRules.get('no-restricted-imports');
const boundaryRules = {};
let boundaryCount = 0;
const boundary = (files, ...rules) => {
  const name = `boundary-${boundaryCount++}`;
  boundaryRules[name] = restrictedImports;
  return {
    files: files.filter((glob) => !glob.startsWith('!')),
    ignores: files.filter((glob) => glob.startsWith('!')).map((glob) => glob.slice(1)),
    rules: { [`boundaries/${name}`]: ['error', { patterns: rules.map(([group, message]) => ({ group, message })) }] },
  };
};

const NO_CDK = [['aws-cdk-lib', 'aws-cdk-lib/*', 'constructs'], 'the runtime and the contract bundle into Lambda: no aws-cdk-lib'];
const CONSTRUCT_ONLY = [
  anyDepth('lambda', 'cli', 'client', 'test', 'bench', 'scripts'),
  'lib/ is the published construct: it imports only lib/, aws-cdk-lib and constructs',
];
/** The local twin, by path or through the root's `#twin/...` imports (a leading # is escaped: these are gitignore patterns). */
const NO_TWIN = [
  [...anyDepth('packages'), '\\#twin', '\\#twin/*', '\\#twin/**'],
  'product code never imports the local twin: it is a package of its own (packages/webhook-inbox-local)',
];
const CLIENT_ONLY = [anyDepth('cli', 'test', 'bench', 'scripts'), 'the published client carries only itself, the contract and the runtime it shares'];
const NO_TESTS = [anyDepth('test'), 'tools never import tests'];
const NO_OPS_CLI = [anyDepth('cli'), 'the twin does not depend on the ops CLI'];

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'assets/**',
      'dist/**',
      'packages/*/dist/**',
      'cdk.out/**',
      'coverage/**',
      'lib/**/*.js',
      'lib/**/*.d.ts',
      '**/*.cjs',
      '.twin/**',
    ],
  },
  ...tseslint.configs.recommended,
  // Every boundary's rule, registered once for every file (boundary() below fills the table).
  { plugins: { boundaries: { rules: boundaryRules } } },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  // Tests read synthesized templates, whose JSON has no types.
  { files: ['test/**/*.ts', 'packages/*/test/**/*.ts'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
  boundary(['lambda/**/*.ts'], NO_CDK, NO_TWIN),
  boundary(['lib/contract/**/*.ts'], NO_CDK, CONSTRUCT_ONLY, NO_TWIN),
  boundary(['lib/**/*.ts', '!lib/contract/**'], CONSTRUCT_ONLY, NO_TWIN),
  boundary(['cli/**/*.ts'], NO_TWIN),
  boundary(['client/**/*.ts'], CLIENT_ONLY, NO_TWIN),
  boundary(['packages/*/src/**/*.ts', 'packages/*/src/**/*.mjs'], NO_TESTS, NO_OPS_CLI),
  boundary(['bench/**/*.ts', 'scripts/**/*.ts'], NO_TESTS),
  boundary(
    ['lambda/**/*.ts', '!lambda/shared/providers/sample-secrets.ts', '!lambda/shared/providers/*/sample-secret.ts'],
    [['**/sample-secret', '**/sample-secrets'], "sample signing secrets stand in for a provider's own in the twin and tests: no handler bundles them"],
  ),
  // The stored statuses are written through DeliveryStatus and SubmissionState (lib/contract), never
  // as literals. PROCESSING is left out: Answerline's task status has the same word.
  {
    files: [
      'lambda/**/*.ts',
      'cli/**/*.ts',
      'client/**/*.ts',
      'bench/**/*.ts',
      'scripts/**/*.ts',
      'test/**/*.ts',
      'packages/*/src/**/*.ts',
      'packages/*/test/**/*.ts',
    ],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...['Literal[value=', 'TemplateElement[value.raw='].map((node) => ({
          selector: `${node}/^(RECEIVED|PROCESSED|DEAD|AWAITING|DELIVERED|RECOVERED|LINKED|UNAVAILABLE)$/]`,
          message: 'a stored status: use DeliveryStatus or SubmissionState from lib/contract',
        })),
      ],
    },
  },
);
