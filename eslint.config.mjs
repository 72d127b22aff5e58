import tseslint from 'typescript-eslint';

/**
 * Type-aware lint of everything the repository runs: src/, test/, migrations/ (TypeScript, with types),
 * scripts/ and bench/ (JavaScript, without). `npm run lint` runs it with --max-warnings 0, and .ci/run runs
 * that before the tests. Why each rule below is changed: docs/decisions.md, "Lint: type-aware, …".
 */
export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', 'coverage/**', '.cache/**'] },
  {
    files: ['**/*.ts'],
    extends: [...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      // An async method without await is how an override or a callback meets a Promise-returning signature;
      // the rules that catch lost promises (no-floating-promises, no-misused-promises, await-thenable) stay.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Tests read answers whose type is `any` by design (supertest's `body`, jest's `expect.any()`); the
    // assertions are their type check. The promise rules stay on here too.
    files: ['test/**/*.ts', 'src/**/*.spec.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    files: ['**/*.js'],
    extends: [...tseslint.configs.recommended],
    languageOptions: { sourceType: 'commonjs' },
    rules: {
      '@typescript-eslint/no-require-imports': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
);
