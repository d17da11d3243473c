// Lint rules: the typescript-eslint recommended set, plus the project's one hard rule
// (no console.log outside the CLI: stdout carries JSON-RPC in stdio mode).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.tools/**', 'examples/**/*.py', 'schema/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', Buffer: 'readonly', console: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-console': ['error', { allow: ['error', 'warn'] }],
    },
  },
  {
    files: ['src/cli/**', 'bench/**', 'test/**', 'examples/**'],
    rules: { 'no-console': 'off' },
  },
);
