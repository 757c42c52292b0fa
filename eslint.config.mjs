// Lint and the architecture's boundaries, run by `npm test` (`npm run lint`).
import tseslint from 'typescript-eslint';

/** An import of any of these modules, from any depth. */
const anyDepth = (...folders) => folders.flatMap((folder) => [`${folder}`, `${folder}/*`, `**/${folder}`, `**/${folder}/*`, `**/${folder}/**`]);

/**
 * Files whose imports the given rules restrict, each rule a group of patterns and the message that
 * says why. ESLint replaces a rule's options when a later block matches the same file, so each
 * block names every rule of its files, and the blocks' files do not overlap.
 */
const boundary = (files, ...rules) => ({
  files: files.filter((glob) => !glob.startsWith('!')),
  ignores: files.filter((glob) => glob.startsWith('!')).map((glob) => glob.slice(1)),
  rules: { 'no-restricted-imports': ['error', { patterns: rules.map(([group, message]) => ({ group, message })) }] },
});

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
);
