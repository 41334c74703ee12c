// Lint: typescript-eslint recommended rules, no import cycles, and the layer
// boundaries of docs/architecture.md (engine/ imports nothing from actors/,
// http/, cli/; actors/ nothing from http/ or cli/; http/ nothing from cli/).
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'examples/**', 'bin/**', 'coverage/**', 'bench/out/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver': { node: { extensions: ['.ts', '.js'] } },
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-restricted-paths': ['error', {
        zones: [
          { target: './engine', from: ['./actors', './http', './cli'], message: 'engine/ must not import actors/, http/ or cli/ (docs/architecture.md)' },
          { target: './actors', from: ['./http', './cli'], message: 'actors/ must not import http/ or cli/ (docs/architecture.md)' },
          { target: './http', from: ['./cli'], message: 'http/ must not import cli/' },
        ],
      }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
);
