/**
 * A console route is data like the API's: method, a path pattern, and a
 * handler that gets the signed-in project and the request's form (POST)
 * and returns what to send — a page, a redirect, or nothing when it wrote
 * the response itself (the live event stream).
 */
import type { Context } from 'koa';
import type { Form } from '../body.js';
import type { Session } from './sessions.js';
import type { LayoutData } from './views.js';
import type { TEMPLATES } from './templates/index.js';

export interface UiRequest {
  readonly ctx: Context;
  readonly session: Session;
  readonly projectId: string;
  readonly project: { readonly id: string; readonly name: string };
  /** Path parameters, in pattern order. */
  readonly params: readonly string[];
  readonly form: Form;
  /** A query parameter (the first when repeated), '' when absent. */
  query(name: string): string;
}

export type UiResult =
  | { readonly kind: 'page'; readonly view: keyof typeof TEMPLATES; readonly data: Omit<LayoutData, 'project' | 'csrf'> & Record<string, unknown>; readonly status?: number }
  | { readonly kind: 'redirect'; readonly to: string }
  | { readonly kind: 'done' };

export interface UiRoute {
  readonly method: 'GET' | 'POST';
  /** Matched against the whole path; groups become `params` (URL-decoded). */
  readonly pattern: RegExp;
  readonly handler: (req: UiRequest) => Promise<UiResult>;
}

export const page = (view: keyof typeof TEMPLATES, data: Omit<LayoutData, 'project' | 'csrf'> & Record<string, unknown>, status?: number): UiResult => ({ kind: 'page', view, data, ...(status !== undefined ? { status } : {}) });
export const redirect = (to: string): UiResult => ({ kind: 'redirect', to });
