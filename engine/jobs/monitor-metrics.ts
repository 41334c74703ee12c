/** What a monitor can check on a column. */
export const MONITOR_METRICS = ['null_count', 'unique_count', 'min_max'] as const;
export type MonitorMetric = (typeof MONITOR_METRICS)[number];
