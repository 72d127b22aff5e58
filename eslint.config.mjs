import tseslint from 'typescript-eslint';

/**
 * Type-aware lint of everything the repository runs: src/, test/, migrations/ (TypeScript, with types),
 * scripts/ and bench/ (JavaScript, without). `npm run lint` runs it with --max-warnings 0, and .ci/run runs
 * that before the tests. Why each rule below is changed: docs/decisions.md, "Lint: type-aware, …".
 */

/** Packages whose files are internal: only their entry points are public. */
const INTERNAL_FILES = ['typeorm/*', '@nestjs/*/*', 'pg/*', 'pg-pool/*', 'express/lib/*'];

/**
 * The service, its tests and its bench rely on the public API of their dependencies only: a private field, a
 * patched prototype or a deep import may change in any release without notice (docs/decisions.md, "Public
 * APIs only").
 */
const PUBLIC_APIS_ONLY = {
  files: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.js'],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            group: INTERNAL_FILES,
            message: "A package's internal file: import from the package's entry point.",
          },
        ],
      },
    ],
    'no-restricted-syntax': [
      'error',
      {
        // The bench's CommonJS: `require` of a file of INTERNAL_FILES (esquery's regex cannot hold a `/`).
        selector:
          'CallExpression[callee.name="require"] > Literal[value=/^(typeorm|pg|pg-pool|@nestjs\\u002f[^\\u002f]+|express\\u002flib)\\u002f/]',
        message: "A package's internal file: require the package's entry point.",
      },
      {
        selector: 'MemberExpression[property.name=/^_/]',
        message: 'An underscored member is private to its library (or to Node): use a public API.',
      },
      {
        selector: 'MemberExpression[property.name="master"]',
        message: "TypeORM's driver pool is private: use a query runner or a pool built from the config.",
      },
      {
        selector: 'AssignmentExpression > MemberExpression.left[object.property.name="prototype"]',
        message: 'Patching a prototype changes every instance: subclass it instead.',
      },
      {
        // `response.send = (body) => …`: replacing a method of an object someone else made (a library's
        // request, response, client or socket) depends on when and how that library calls it.
        selector:
          'AssignmentExpression[right.type=/^(ArrowFunctionExpression|FunctionExpression)$/] > MemberExpression.left[computed=false]:not([object.type="ThisExpression"]):not([property.name=/^on[a-z]+$/])',
        message:
          "Replacing an object's method patches that instance: use the library's public hooks (an option, an event, a subclass, Nest's adapter or an interceptor).",
      },
      {
        // The same with a bound function (`res.send = other.bind(res)`).
        selector:
          'AssignmentExpression[right.callee.property.name="bind"] > MemberExpression.left:not([object.type="ThisExpression"])',
        message: "Replacing an object's method patches that instance: use its public hooks instead.",
      },
      {
        selector:
          'CallExpression[callee.object.name=/^(Object|Reflect)$/][callee.property.name=/^(defineProperty|defineProperties|setPrototypeOf)$/]',
        message:
          'Defining or replacing a property of an object by reflection patches it: use its public API, or build an object of your own.',
      },
    ],
  },
};

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
  PUBLIC_APIS_ONLY,
);
