import tseslint from 'typescript-eslint';

/**
 * The service relies on the public API of its dependencies only: a private field, a patched prototype or a
 * deep import may change in any release without notice (docs/decisions.md, "Public APIs only").
 */
const PUBLIC_APIS_ONLY = {
  files: ['src/**/*.ts'],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            group: ['typeorm/*', '@nestjs/*/*', 'pg/*', 'pg-pool/*', 'express/lib/*'],
            message: "A package's internal file: import from the package's entry point.",
          },
        ],
      },
    ],
    'no-restricted-syntax': [
      'error',
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
    ],
  },
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', 'bench/**/*.js'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  PUBLIC_APIS_ONLY,
);
