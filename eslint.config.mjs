// Lint and the architecture's boundaries, run by `npm test` (`npm run lint`).
import { builtinRules } from 'eslint/use-at-your-own-risk';
import tseslint from 'typescript-eslint';

/** An import of any of these modules, from any depth. */
const anyDepth = (...folders) => folders.flatMap((folder) => [`${folder}`, `${folder}/*`, `**/${folder}`, `**/${folder}/*`, `**/${folder}/**`]);

/**
 * Each boundary is a rule of its own (a copy of no-restricted-imports): in a flat config a later
 * setting of one rule replaces an earlier one for the files both match, so boundaries sharing the
 * rule would silently drop each other where their files overlap.
 */
const restrictedImports = builtinRules.get('no-restricted-imports');
const boundaryRules = {};
let boundaryCount = 0;

/** Files whose imports a boundary restricts: the message says why. */
const boundary = (files, patterns, message) => {
  const name = `boundary-${boundaryCount++}`;
  boundaryRules[name] = restrictedImports;
  return { files, rules: { [`boundaries/${name}`]: ['error', { patterns: [{ group: patterns, message }] }] } };
};

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
  { files: ['test/**/*.ts'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
  boundary(
    ['lambda/**/*.ts', 'lib/contract/**/*.ts'],
    ['aws-cdk-lib', 'aws-cdk-lib/*', 'constructs'],
    'the runtime and the contract bundle into Lambda: no aws-cdk-lib',
  ),
  boundary(
    ['lib/**/*.ts'],
    anyDepth('lambda', 'local', 'cli', 'client', 'test', 'bench', 'scripts'),
    'lib/ is the published construct: it imports only lib/, aws-cdk-lib and constructs',
  ),
  boundary(['local/**/*.ts', 'local/**/*.mjs', 'bench/**/*.ts', 'scripts/**/*.ts'], anyDepth('test'), 'tools never import tests'),
  boundary(['local/**/*.ts'], anyDepth('cli'), 'the twin does not depend on the ops CLI'),
  // The stored statuses are written through DeliveryStatus and SubmissionState (lib/contract), never
  // as literals. PROCESSING is left out: Answerline's task status has the same word.
  {
    files: ['lambda/**/*.ts', 'cli/**/*.ts', 'client/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts', 'test/**/*.ts'],
    ignores: ['test/local/**'],
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
  {
    ...boundary(
      ['lambda/**/*.ts'],
      ['**/sample-secret', '**/sample-secrets'],
      "sample signing secrets stand in for a provider's own in the twin and tests: no handler bundles them",
    ),
    ignores: ['lambda/shared/providers/sample-secrets.ts', 'lambda/shared/providers/*/sample-secret.ts'],
  },
  boundary(
    ['client/**/*.ts'],
    anyDepth('local', 'cli', 'test', 'bench', 'scripts'),
    'the published client carries only itself, the contract and the runtime it shares',
  ),
);
