// File-name rules: each rule's exact message, the order in
// which the rules are checked, and the symlink-aware root containment check,
// plus the list-prefix rule.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EngineError } from '../engine/errors.js';
import { fileNameProblem, validateFileName, validatePrefix } from '../engine/files/file-name.js';

let base: string;
let root: string;
let outside: string;

before(() => {
  base = mkdtempSync(path.join(os.tmpdir(), 'files-name-'));
  root = path.join(base, 'root');
  outside = path.join(base, 'outside');
  mkdirSync(path.join(root, 'sub', 'deep'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(path.join(root, 'sub', 'a.txt'), 'a');
  writeFileSync(path.join(outside, 'secret.txt'), 's');
  symlinkSync(outside, path.join(root, 'out'));
  symlinkSync('/etc', path.join(root, 'etc-link'));
  symlinkSync('sub', path.join(root, 'in'));
  symlinkSync(path.join(root, 'sub', 'deep'), path.join(root, 'in-abs'));
  symlinkSync('..', path.join(root, 'up'));
  symlinkSync('sub/../..', path.join(root, 'up-sneaky'));
  symlinkSync('../../outside', path.join(root, 'sub', 'out-rel'));
  symlinkSync(path.join(base, 'no-such-dir'), path.join(root, 'dangling-out'));
  symlinkSync('not-yet', path.join(root, 'dangling-in'));
  symlinkSync('loop-b', path.join(root, 'loop-a'));
  symlinkSync('loop-a', path.join(root, 'loop-b'));
  symlinkSync('.', path.join(root, 'self'));
  symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'secret-link'));
});

after(() => rmSync(base, { recursive: true, force: true }));

function badName(name: string, message: string): void {
  assert.throws(() => validateFileName(name, root), (err: unknown) => {
    assert.ok(err instanceof EngineError);
    assert.equal(err.code, 'bad_request');
    assert.equal(err.message, message);
    return true;
  });
}

const msg = (name: string, what: string): string => `invalid file name ${JSON.stringify(name)}: ${what}`;

test('valid names return the absolute path under the root', () => {
  assert.equal(validateFileName('replications/users.yaml', root), path.join(root, 'replications', 'users.yaml'));
  assert.equal(validateFileName('sub/a.txt', root), path.join(root, 'sub', 'a.txt'));
  assert.equal(validateFileName('a..b/c.d..', root), path.join(root, 'a..b', 'c.d..'));
  assert.equal(validateFileName('.gitignore', root), path.join(root, '.gitignore'));
  assert.equal(validateFileName('x/.github/y', root), path.join(root, 'x', '.github', 'y'));
  assert.equal(validateFileName('new/dir/that/does/not/exist.txt', root), path.join(root, 'new/dir/that/does/not/exist.txt'));
  assert.equal(validateFileName('sub/a.txt/below', root), path.join(root, 'sub/a.txt/below'));
});

test('the root may be given relative or with a trailing slash', () => {
  const rel = path.relative(process.cwd(), root);
  assert.equal(validateFileName('x', rel), path.join(root, 'x'));
  assert.equal(validateFileName('x', `${root}/`), path.join(root, 'x'));
});

test('length: empty, over 1024 bytes, or a segment over 255 bytes', () => {
  badName('', msg('', 'length out of range'));
  const exact = Array.from({ length: 205 }, () => 'abcd').join('/');
  assert.equal(Buffer.byteLength(exact), 1024);
  assert.equal(validateFileName(exact, root), path.join(root, exact));
  badName(`${exact}x`, msg(`${exact}x`, 'length out of range'));
  const seg255 = 'a'.repeat(255);
  assert.equal(validateFileName(`d/${seg255}`, root), path.join(root, 'd', seg255));
  badName(`d/${'a'.repeat(256)}`, msg(`d/${'a'.repeat(256)}`, 'length out of range'));
  // Bytes, not characters: 128 two-byte characters are 256 bytes.
  badName('é'.repeat(128), msg('é'.repeat(128), 'length out of range'));
  assert.equal(validateFileName('é'.repeat(127), root), path.join(root, 'é'.repeat(127)));
});

test('absolute paths and drive letters', () => {
  badName('/etc/passwd', msg('/etc/passwd', 'absolute paths are not allowed'));
  badName('/', msg('/', 'absolute paths are not allowed'));
  badName('C:/Windows', msg('C:/Windows', 'absolute paths are not allowed'));
  badName('c:notes.txt', msg('c:notes.txt', 'absolute paths are not allowed'));
  assert.equal(validateFileName('ab:c', root), path.join(root, 'ab:c'));
});

test('".." segments', () => {
  badName('../x', msg('../x', '".." segments are not allowed'));
  badName('../outside.txt', msg('../outside.txt', '".." segments are not allowed'));
  badName('a/../b', msg('a/../b', '".." segments are not allowed'));
  badName('a/..', msg('a/..', '".." segments are not allowed'));
  badName('..', msg('..', '".." segments are not allowed'));
});

test('NUL bytes (message carries no name)', () => {
  badName('a\0b', 'invalid file name: NUL bytes are not allowed');
  badName('\0', 'invalid file name: NUL bytes are not allowed');
});

test('backslashes, with the name JSON-escaped', () => {
  badName('a\\b', 'invalid file name "a\\\\b": backslashes are not allowed');
  badName('a\\b.txt', msg('a\\b.txt', 'backslashes are not allowed'));
  badName('..\\x', msg('..\\x', 'backslashes are not allowed'));
});

test('empty or "." segments and trailing slashes', () => {
  badName('a//b', msg('a//b', 'empty or "." segments are not allowed'));
  badName('./a', msg('./a', 'empty or "." segments are not allowed'));
  badName('a/./b', msg('a/./b', 'empty or "." segments are not allowed'));
  badName('a/', msg('a/', 'empty or "." segments are not allowed'));
  badName('.', msg('.', 'empty or "." segments are not allowed'));
});

test('".git" segments', () => {
  badName('.git/config', msg('.git/config', '".git" segments are not allowed'));
  badName('.git', msg('.git', '".git" segments are not allowed'));
  badName('a/.git/HEAD', msg('a/.git/HEAD', '".git" segments are not allowed'));
});

test('rules are checked in the documented order (first broken rule wins)', () => {
  badName('/../x', msg('/../x', 'absolute paths are not allowed'));
  badName(`/${'a'.repeat(300)}`, msg(`/${'a'.repeat(300)}`, 'length out of range'));
  badName('../a\0', msg('../a\0', '".." segments are not allowed'));
  badName('a\0\\b', 'invalid file name: NUL bytes are not allowed');
  badName('a\\b/', msg('a\\b/', 'backslashes are not allowed'));
  badName('./.git', msg('./.git', 'empty or "." segments are not allowed'));
  badName('.git/../x', msg('.git/../x', '".." segments are not allowed'));
  badName('.git/x/', msg('.git/x/', 'empty or "." segments are not allowed'));
});

test('quotes, newlines and control characters are JSON-escaped in the message', () => {
  badName('a"b\n/../c', 'invalid file name "a\\"b\\n/../c": ".." segments are not allowed');
  badName('tab\there/', 'invalid file name "tab\\there/": empty or "." segments are not allowed');
});

test('symlinks leaving the root are rejected, for the link and anything below it', () => {
  for (const name of ['out', 'out/secret.txt', 'out/new/file.txt', 'etc-link/passwd', 'up', 'up-sneaky/x', 'sub/out-rel/secret.txt', 'secret-link', 'in/out-rel/x']) {
    badName(name, msg(name, 'path leaves the project root'));
  }
});

test('only the final real path counts: a detour out and back in is inside', () => {
  assert.equal(validateFileName('up/root/sub/a.txt', root), path.join(root, 'up', 'root', 'sub', 'a.txt'));
});

test('a dangling symlink is judged by where its target would be', () => {
  badName('dangling-out/x.txt', msg('dangling-out/x.txt', 'path leaves the project root'));
  badName('dangling-out', msg('dangling-out', 'path leaves the project root'));
  assert.equal(validateFileName('dangling-in/x.txt', root), path.join(root, 'dangling-in', 'x.txt'));
});

test('symlink loops are rejected as leaving the root', () => {
  badName('loop-a/x', msg('loop-a/x', 'path leaves the project root'));
});

test('symlinks that stay inside the root are accepted', () => {
  assert.equal(validateFileName('in/a.txt', root), path.join(root, 'in', 'a.txt'));
  assert.equal(validateFileName('in', root), path.join(root, 'in'));
  assert.equal(validateFileName('in-abs/new.txt', root), path.join(root, 'in-abs', 'new.txt'));
  assert.equal(validateFileName('self/sub/a.txt', root), path.join(root, 'self', 'sub', 'a.txt'));
  assert.equal(validateFileName('self', root), path.join(root, 'self'));
});

test('a root reached through a symlink works the same', () => {
  const alias = path.join(base, 'root-alias');
  symlinkSync(root, alias);
  assert.equal(validateFileName('in/a.txt', alias), path.join(alias, 'in', 'a.txt'));
  badName('out/x', msg('out/x', 'path leaves the project root'));
  assert.throws(() => validateFileName('out/x', alias), /path leaves the project root/);
});

test('fileNameProblem reports only the lexical rules', () => {
  assert.equal(fileNameProblem('out/secret.txt'), null);
  assert.equal(fileNameProblem('a//b'), msg('a//b', 'empty or "." segments are not allowed'));
});

test('list prefixes: anything but NUL and ".."', () => {
  for (const ok of ['', 'replications/', 'rep', '/abs', 'a\\b', 'a//', './x', '.git']) assert.doesNotThrow(() => validatePrefix(ok));
  for (const [bad, message] of [
    ['a\0', 'invalid prefix: NUL bytes are not allowed'],
    ['../', 'invalid prefix "../": ".." is not allowed'],
    ['a/..', 'invalid prefix "a/..": ".." is not allowed'],
  ] as const) {
    assert.throws(() => validatePrefix(bad), (err: unknown) => err instanceof EngineError && err.code === 'bad_request' && err.message === message);
  }
});
