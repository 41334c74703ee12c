/**
 * Credentials of a project's git remote: embedded in an HTTPS
 * URL (`https://user:token@host/x.git`) or given in the project env file's
 * `env:` map as `GIT_USERNAME` / `GIT_PASSWORD` (the env file wins). They
 * are taken out of the URL before git runs, so they never appear in a
 * process argument list, and reach git only through the environment of the
 * fetch (a credential helper prints them). Every message git produces goes
 * through `strip` before it is stored, logged or answered.
 */
import { readEnvFile, redact } from '../connections/index.js';

export interface GitCredentials {
  readonly username: string;
  readonly password: string;
}

export interface GitRemote {
  /** The URL git is given: without userinfo for http(s). */
  readonly url: string;
  readonly credentials: GitCredentials | null;
}

export const USERNAME_KEY = 'GIT_USERNAME';
export const PASSWORD_KEY = 'GIT_PASSWORD';

/** The user name git is given when only a password (a token) is known. */
const TOKEN_USERNAME = 'git';

function decode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/** Splits the configured URL and the env file's values into what git sees. */
export function gitRemote(configuredUrl: string, env: Readonly<Record<string, string>>): GitRemote {
  let url = configuredUrl;
  let username: string | undefined;
  let password: string | undefined;
  if (/^https?:\/\//i.test(configuredUrl)) {
    try {
      const parsed = new URL(configuredUrl);
      if (parsed.username !== '' || parsed.password !== '') {
        username = parsed.username === '' ? undefined : decode(parsed.username);
        password = parsed.password === '' ? undefined : decode(parsed.password);
        parsed.username = '';
        parsed.password = '';
        url = parsed.toString();
      }
    } catch {
      // not a URL git would accept either; git reports it
    }
  }
  username = env[USERNAME_KEY] || username;
  password = env[PASSWORD_KEY] || password;
  if (password === undefined) {
    // A user name alone (`https://token@host/…`) is how some hosts take a token.
    return { url, credentials: username === undefined ? null : { username, password: '' } };
  }
  return { url, credentials: { username: username ?? TOKEN_USERNAME, password } };
}

/** The remote of a project: its configured URL and its env file's GIT_* values. */
export function projectRemote(configuredUrl: string, envFile: string, cwd: string): GitRemote {
  return gitRemote(configuredUrl, readEnvFile(envFile, 'project', cwd).env);
}

const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@]+@/gi;

/** A user name this long given without a password is a token, and secret. */
const TOKEN_LIKE_LENGTH = 16;

/**
 * `text` without credentials: URL userinfo becomes `***`, and the literal
 * password is replaced wherever it appears. A user name is only hidden
 * inside URLs unless it is token-like: a short one such as `git` would
 * otherwise garble every message.
 */
export function stripCredentials(text: string, remote: GitRemote | null): string {
  const c = remote?.credentials;
  const secrets = c ? [c.password, c.password === '' && c.username.length >= TOKEN_LIKE_LENGTH ? c.username : ''] : [];
  return redact(text.replace(URL_USERINFO, '$1***@'), secrets.filter((s) => s !== ''));
}
