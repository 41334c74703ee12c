/**
 * Identifiers, all from node:crypto's random source.
 *
 * Execution ids are KSUIDs: 4 bytes of seconds since 2014-05-13T16:53:20Z
 * followed by 16 random bytes, base62-encoded to 27 characters with the
 * alphabet 0-9A-Za-z, so byte order is creation order. Plain KSUIDs only
 * order to the second; dispatch takes queued executions in exec_id order
 * So ids made by this process within the same second reuse the
 * previous payload plus one instead of fresh random bytes (the monotonic
 * scheme ULID uses). Ids minted by several daemons in the same second still
 * order randomly among themselves.
 */
import { createHash, randomBytes, randomInt, randomUUID } from 'node:crypto';

const LOWER_ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KSUID_EPOCH = 1_400_000_000;
const KSUID_LENGTH = 27;

function randomAlnum(n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += LOWER_ALNUM[randomInt(LOWER_ALNUM.length)];
  return s;
}

/** `proj_` + 16 characters of [a-z0-9]. */
export const newProjectId = (): string => `proj_${randomAlnum(16)}`;

/** `job_` + 16 characters of [a-z0-9]. */
export const newJobId = (): string => `job_${randomAlnum(16)}`;

/** A new project token: a lowercase UUID v4. Shown once; only its digest is stored. */
export const newToken = (): string => randomUUID();

/** The shape a presented token must have (lowercase UUID v4). */
export const isTokenShape = (s: string): boolean => /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(s);

/** Lowercase hex SHA-256 of a UTF-8 string: what the store keeps instead of a token. */
export const sha256hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

export const isProjectId = (s: string): boolean => /^proj_[a-z0-9]{16}$/.test(s);
export const isJobId = (s: string): boolean => /^job_[a-z0-9]{16}$/.test(s);
export const isExecId = (s: string): boolean => /^[0-9A-Za-z]{27}$/.test(s);

let lastSeconds = -1;
let lastPayload = 0n;
const PAYLOAD_MAX = (1n << 128n) - 1n;

/** A KSUID for an execution created at `now` (27 characters of base62, sorts by creation). */
export function newExecId(now: Date = new Date()): string {
  let seconds = Math.max(0, Math.floor(now.getTime() / 1000) - KSUID_EPOCH);
  let payload: bigint;
  if (seconds <= lastSeconds) {
    // Same second (or the clock stepped back): stay after the previous id.
    seconds = lastSeconds;
    payload = lastPayload + 1n;
    if (payload > PAYLOAD_MAX) {
      seconds += 1;
      payload = BigInt(`0x${randomBytes(16).toString('hex')}`);
    }
  } else {
    payload = BigInt(`0x${randomBytes(16).toString('hex')}`);
  }
  lastSeconds = seconds;
  lastPayload = payload;
  let n = (BigInt(seconds) << 128n) | payload;
  let s = '';
  while (n > 0n) {
    s = BASE62[Number(n % 62n)] + s;
    n /= 62n;
  }
  return s.padStart(KSUID_LENGTH, '0');
}

/** The creation time (to the second) encoded in a KSUID. */
export function execIdTime(id: string): Date {
  let n = 0n;
  for (const c of id) n = n * 62n + BigInt(BASE62.indexOf(c));
  return new Date((Number(n >> 128n) + KSUID_EPOCH) * 1000);
}
