/**
 * What a host must know of a target type before opening it, without loading
 * its driver: a single-writer target (a DuckDB file) runs one node at a time
 * through its file's actor; the others run several at once on sessions of
 * one target (actors/build-run/start-build.ts picks the runner from this).
 */
import type { TargetType } from './target.js';

export interface TargetTraits {
  readonly singleWriter: boolean;
}

export const TARGET_TRAITS: { readonly [K in TargetType]: TargetTraits } = {
  postgres: { singleWriter: false },
  duckdb: { singleWriter: true },
};

/** True for single-writer target types; false for unknown ones (which fail when opened). */
export function isSingleWriter(type: string): boolean {
  return Object.hasOwn(TARGET_TRAITS, type) && TARGET_TRAITS[type as TargetType].singleWriter;
}
