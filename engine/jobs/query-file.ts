/**
 * Query files: a `.sql` file whose header declares
 * `-- connection: NAME`. The header is the run of leading blank and `--`
 * comment lines; the body splits into statements on `;` outside quotes,
 * comments and dollar-quoted strings, using the SQL scanner the build engine
 * uses, so both agree on what a string or a comment is.
 */
import { CONNECTION_NAME } from '../connections/connection.js';
import { quote, type Scope } from './fields.js';
import { isPunct, tokenize } from '../sql/lexer.js';
import type { LinePos } from './problem.js';

export interface QueryStatement {
  /** From its first to its last code token: no leading comments, no `;`. */
  readonly text: string;
  /** 1-based line of its first code token. */
  readonly line: number;
}

export interface QueryFile {
  readonly kind: 'query';
  readonly connection: string;
  readonly statements: readonly QueryStatement[];
}

export interface ConnectionDeclaration {
  readonly name: string;
  /** 1-based line of the declaration. */
  readonly line: number;
  /** Offsets in the text of the `--` that starts it and of the name. */
  readonly lineOffset: number;
  readonly nameOffset: number;
}

const DECLARATION = /^--\s*connection:\s*(\S+)/i;

/** The `-- connection:` lines of the header, in order. */
export function connectionDeclarations(text: string): ConnectionDeclaration[] {
  const out: ConnectionDeclaration[] = [];
  let offset = text.startsWith('\uFEFF') ? 1 : 0;
  let line = 1;
  while (offset <= text.length) {
    const nl = text.indexOf('\n', offset);
    const end = nl < 0 ? text.length : nl;
    const raw = text.slice(offset, end).replace(/\r$/, '');
    const trimmed = raw.trimStart();
    if (trimmed !== '' && !trimmed.startsWith('--')) break;
    const m = DECLARATION.exec(trimmed);
    if (m) {
      const indent = raw.length - trimmed.length;
      const nameAt = indent + m[0].length - m[1]!.length;
      out.push({ name: m[1]!, line, lineOffset: offset + indent, nameOffset: offset + nameAt });
    }
    if (nl < 0) break;
    offset = nl + 1;
    line++;
  }
  return out;
}

/** Statements of a query body, without empty or comment-only ones. */
export function splitQueryStatements(text: string, lineOf: (offset: number) => LinePos): QueryStatement[] {
  const out: QueryStatement[] = [];
  let first = -1;
  let last = -1;
  const flush = (): void => {
    if (first >= 0) out.push({ text: text.slice(first, last), line: lineOf(first).line });
    first = -1;
  };
  for (const t of tokenize(text)) {
    if (isPunct(text, t, ';')) flush();
    else if (t.kind !== 'comment') {
      if (first < 0) first = t.start;
      last = t.end;
    }
  }
  flush();
  return out;
}

export function validateQueryFile(s: Scope, text: string, lineOf: (offset: number) => LinePos): QueryFile {
  const decls = connectionDeclarations(text);
  decls.forEach((d, i) => {
    if (i > 0) s.problems.add('', 'connection is declared more than once', d.lineOffset);
    if (!CONNECTION_NAME.test(d.name)) s.problems.add('', `invalid connection name ${quote(d.name)}`, d.nameOffset);
  });
  const connection = decls[0]?.name ?? '';
  if (connection !== '' && CONNECTION_NAME.test(connection)) {
    const kind = s.ctx.connectionKind(connection);
    if (kind !== undefined && kind !== 'database') {
      s.problems.add('', `query connection ${connection} must be a database connection`, decls[0]!.nameOffset);
    }
  }
  const statements = splitQueryStatements(text, lineOf);
  if (statements.length === 0) s.problems.add('', 'query file has no SQL statements');
  return { kind: 'query', connection, statements };
}
