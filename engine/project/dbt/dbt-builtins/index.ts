/** The text of every built-in macro of the `dbt` namespace (see macro-scopes.ts). */
import { DATE_MACROS } from './dates.js';
import { SQL_MACROS } from './sql-functions.js';

export const BUILTIN_MACROS = DATE_MACROS + SQL_MACROS;
