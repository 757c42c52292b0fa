// Lint and the architecture's boundaries, run by `npm test` (`npm run lint`).
import tseslint from 'typescript-eslint';

/** An import of any of these modules, from any depth. */
const anyDepth = (...folders) => folders.flatMap((folder) => [`${folder}`, `${folder}/*`, `**/${folder}`, `**/${folder}/*`, `**/${folder}/**`]);

/** Files whose imports a boundary restricts: the message says why. */
const boundary = (files, patterns, message) => ({
  files,
  rules: { 'no-restricted-imports': ['error', { patterns: [{ group: patterns, message }] }] },
});

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
  boundary(
    ['lambda/**/*.ts', 'lib/contract/**/*.ts'],
    ['aws-cdk-lib', 'aws-cdk-lib/*', 'constructs'],
    'the runtime and the contract bundle into Lambda: no aws-cdk-lib',
  ),
  boundary(
    ['lib/**/*.ts'],
    anyDepth('lambda', 'packages', 'cli', 'client', 'test', 'bench', 'scripts'),
    'lib/ is the published construct: it imports only lib/, aws-cdk-lib and constructs',
  ),
  boundary(['packages/*/src/**/*.ts', 'packages/*/src/**/*.mjs', 'bench/**/*.ts', 'scripts/**/*.ts'], anyDepth('test'), 'tools never import tests'),
  boundary(['packages/*/src/**/*.ts'], anyDepth('cli'), 'the twin does not depend on the ops CLI'),
  boundary(
    ['client/**/*.ts'],
    anyDepth('packages', 'cli', 'test', 'bench', 'scripts'),
    'the published client carries only itself, the contract and the runtime it shares',
  ),
);
