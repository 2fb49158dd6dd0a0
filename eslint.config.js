// Lint rules that the type checker cannot express, run by `make typecheck` (npx eslint .). Kept to rules that
// catch real defects: a promise nobody awaits or handles (an unhandled rejection, or work that outlives its
// request), and a promise passed where a value is expected.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', '.tools/', '.astro/', 'site/.astro/', 'test-results/', 'ledgers/', 'data/'] },
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
    },
  },
);
