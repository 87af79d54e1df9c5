// npm run lint: ESLint (correctness rules; Prettier owns layout), Prettier --check, clang-format for native/.
import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import globals from 'globals'

export default tseslint.config(
  {
    ignores: ['dist*/', 'build/', 'build-cmake*/', 'prebuilds/', 'node_modules/', 'docs/api/', 'test/fixtures/cgroup/'],
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
)
