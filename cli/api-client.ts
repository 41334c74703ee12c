/**
 * The HTTP client of the daemon's API: reads
 * SERVICE_PROJECT_TOKEN and SERVICE_PLATFORM_HOST (default
 * http://127.0.0.1:8080) from the environment, then the `env:` map of
 * ~/.service/env.yaml. API errors become `error: <error> (<code>)`; an
 * unreachable host `cannot reach <host>: <detail>`; both exit 1.
 */
import { homeEnvVars } from '../engine/home-env.js';

export class ClientError extends Error {
  constructor(
    message: string,
    readonly body?: Readonly<Record<string, unknown>>,
  ) {
    super(message);
  }
}

export interface ApiClient {
  get(path: string, query?: Record<string, string | undefined>): Promise<unknown>;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<unknown>;
}

function setting(name: string): string | undefined {
  const v = process.env[name];
  return v !== undefined && v !== '' ? v : homeEnvVars()[name] || undefined;
}

export const platformHost = () => setting('SERVICE_PLATFORM_HOST') ?? 'http://127.0.0.1:8080';

export function apiClient(): ApiClient {
  const token = setting('SERVICE_PROJECT_TOKEN');
  if (!token) throw new ClientError('SERVICE_PROJECT_TOKEN is not set');
  const host = platformHost().replace(/\/+$/, '');
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    let res: Response;
    try {
      res = await fetch(host + path, {
        method,
        headers: { Authorization: `Service-Project-Token ${token}`, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...headers },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
    } catch (err) {
      const cause = (err as { cause?: { message?: string } }).cause?.message ?? (err as Error).message;
      throw new ClientError(`cannot reach ${host}: ${cause}`);
    }
    const data = (await res.json().catch(() => ({}))) as { error?: string; code?: string };
    if (!res.ok) throw new ClientError(`error: ${data.error ?? res.statusText} (${data.code ?? res.status})`, data);
    return data;
  };
  return {
    get: (path, query = {}) => {
      const q = new URLSearchParams(Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined));
      return call('GET', q.size > 0 ? `${path}?${q}` : path);
    },
    post: (path, body, headers) => call('POST', path, body, headers),
  };
}
