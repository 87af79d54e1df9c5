// npm run lint: ESLint (correctness rules; Prettier owns layout), Prettier --check, clang-format for native/.
import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import globals from 'globals'
import vitest from '@vitest/eslint-plugin'

export default tseslint.config(
  {
    ignores: [
      'dist*/',
      'build/',
      'build-cmake*/',
      'build-coverage/',
      'coverage/',
      'prebuilds/',
      'node_modules/',
      'docs/api/',
      'test/fixtures/cgroup/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      // Hot paths and native handles are typed loosely on purpose at a few boundaries.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      'no-empty': ['error', { allowEmptyCatch: true }],
      '@typescript-eslint/no-unused-expressions': ['error', { allowShortCircuit: true, allowTernary: true }],
    },
  },
  {
    files: ['**/*.cjs', 'scripts/**/*.js'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Benchmarks, fixtures and demos burn CPU with empty spin loops on purpose.
    files: ['bench/**', 'scripts/**', 'test/**'],
    rules: { 'no-empty': 'off' },
  },
  {
    // Tests that cannot fail: no assertion, an assertion only on one branch, a title asserted twice.
    files: ['test/**/*.ts'],
    plugins: { vitest },
    rules: {
      ...vitest.configs.recommended.rules,
      // Helpers named expect… / assert… assert for the test that calls them.
      'vitest/expect-expect': ['error', { assertFunctionNames: ['expect', 'expect*', 'assert*'] }],
      // expect(value, message): vitest's second argument names what failed.
      'vitest/valid-expect': ['error', { maxArgs: 2 }],
      'vitest/no-standalone-expect': ['error', { additionalTestBlockFunctions: ['itWithFiles'] }],
    },
  },
)
