/**
 * Secrets never reach a message or log line:
 * a password inside a URL, a `password=…` pair in a driver message, and any
 * literal password the caller knows about become `***`.
 */

const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@?#]*:)([^\s@/]*)@/gi;
const KEY_VALUE_PASSWORD = /\b(password\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s,;&)]+)/gi;

/**
 * Passwords shorter than this are only redacted in URL and key=value
 * positions: replacing a 1–2 character string everywhere would garble the
 * message without hiding anything a reader could not guess.
 */
const MIN_LITERAL_SECRET = 3;

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export function redact(text: string, secrets: readonly (string | undefined)[] = []): string {
  let out = text.replace(URL_PASSWORD, '$1***@').replace(KEY_VALUE_PASSWORD, '$1***');
  for (const secret of secrets) {
    if (secret === undefined || secret.length < MIN_LITERAL_SECRET) continue;
    for (const form of new Set([secret, encodeURIComponent(secret)])) {
      out = out.replace(new RegExp(escapeRegExp(form), 'g'), '***');
    }
  }
  return out;
}
