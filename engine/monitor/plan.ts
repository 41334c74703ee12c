/**
 * Which objects a monitor run measures, as a
 * pure function of the file, the catalog and the baseline:
 *
 * - entries are walked in file order; an explicit `schema.table` is one
 *   object whether or not it exists (a missing one fails its task), a
 *   wildcard expands to the matching tables of its schema, sorted by name;
 * - a table reached twice keeps its first position; its settings are those
 *   of `monitorSettingsFor` (the last matching entry over `defaults`), so a
 *   later `disabled: true` drops it;
 * - `schemata.exclude` patterns are never expanded by a wildcard and raise
 *   no schema-change events (an explicit entry still measures the table);
 * - with a baseline, a table a wildcard reaches now but the baseline did not
 *   measure is `added`; a baseline table a wildcard would reach that no
 *   longer exists is `dropped` and gets a task of its own carrying the event.
 */
import { monitorSettingsFor, type MonitorFile, type MonitorSettings } from '../jobs/index.js';
import { isWildcardKey, wildcardMatches } from '../jobs/index.js';
import type { Baseline } from './baseline.js';
import { tableName, type CatalogTable } from './catalog.js';

export interface PlannedObject {
  readonly kind: 'measure';
  /** `schema.table` */
  readonly table: string;
  readonly relation: CatalogTable;
  readonly settings: MonitorSettings;
  /** The entry key that reached it first (the table itself when explicit). */
  readonly matchedBy: string;
  /** Schema changes against the baseline are reported (not excluded by `schemata.exclude`). */
  readonly tracked: boolean;
  /** Reached by a wildcard, absent from the baseline: a `table_added` event. */
  readonly added: boolean;
}

export interface DroppedObject {
  readonly kind: 'dropped';
  readonly table: string;
  /** The wildcard that reached it in the baseline and would reach it now. */
  readonly matchedBy: string;
  readonly baselineExecId: string;
}

export type MonitorObjectPlan = PlannedObject | DroppedObject;

/** The schemas whose tables the plan needs: every entry's schema. */
export function catalogSchemas(file: MonitorFile): string[] {
  return [...new Set(file.objects.map((o) => o.key.slice(0, o.key.indexOf('.'))))].sort();
}

function splitTable(table: string): CatalogTable {
  const dot = table.indexOf('.');
  return { schema: table.slice(0, dot), name: table.slice(dot + 1) };
}

export function isExcluded(file: MonitorFile, table: string): boolean {
  return file.schemata.exclude.some((p) => wildcardMatches(p, table));
}

/** Measured objects in run order, then the dropped tables (sorted). */
export function planMonitor(file: MonitorFile, catalog: readonly CatalogTable[], baseline: Baseline | undefined): MonitorObjectPlan[] {
  const existing = new Set(catalog.map(tableName));
  const planned = new Map<string, PlannedObject>();
  const seen = new Set<string>();
  for (const entry of file.objects) {
    const wildcard = isWildcardKey(entry.key);
    const tables = wildcard
      ? catalog.map(tableName).filter((t) => wildcardMatches(entry.key, t) && !isExcluded(file, t)).sort()
      : [entry.key];
    for (const table of tables) {
      if (seen.has(table)) continue;
      seen.add(table);
      const settings = monitorSettingsFor(file, table)!;
      if (settings.disabled === true) continue;
      const explicit = file.objects.some((o) => o.key === table);
      const added = baseline !== undefined && !explicit && !baseline.tables.has(table);
      planned.set(table, {
        kind: 'measure',
        table,
        relation: splitTable(table),
        settings,
        matchedBy: explicit ? table : entry.key,
        tracked: !isExcluded(file, table),
        added,
      });
    }
  }
  const dropped: DroppedObject[] = [];
  if (baseline !== undefined) {
    for (const table of [...baseline.tables.keys()].sort()) {
      if (existing.has(table) || planned.has(table) || isExcluded(file, table)) continue;
      const wildcard = file.objects.find((o) => isWildcardKey(o.key) && wildcardMatches(o.key, table));
      if (wildcard === undefined || monitorSettingsFor(file, table)?.disabled === true) continue;
      dropped.push({ kind: 'dropped', table, matchedBy: wildcard.key, baselineExecId: baseline.execId });
    }
  }
  return [...planned.values(), ...dropped];
}
