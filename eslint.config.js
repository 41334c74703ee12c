// Lint: typescript-eslint recommended rules, no import cycles, and the layer
// boundaries of docs/architecture.md (engine/ imports nothing from actors/,
// http/, daemon/, cli/; actors/ nothing from http/, daemon/ or cli/; http/
// nothing from daemon/ or cli/; daemon/ nothing from cli/). Type-only import
// circles, which import-x/no-cycle skips, are scripts/lint-cycles.ts's.
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
          { target: './engine', from: ['./actors', './http', './daemon', './cli'], message: 'engine/ must not import actors/, http/, daemon/ or cli/ (docs/architecture.md)' },
          { target: './actors', from: ['./http', './daemon', './cli'], message: 'actors/ must not import http/, daemon/ or cli/ (docs/architecture.md)' },
          { target: './http', from: ['./daemon', './cli'], message: 'http/ must not import daemon/ or cli/ (docs/architecture.md)' },
          { target: './daemon', from: ['./cli'], message: 'daemon/ must not import cli/ (docs/architecture.md)' },
        ],
      }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
);
