/**
 * dbt's own Jinja filters. In SQL they change nothing visible; where dbt
 * renders a value natively (profiles.yml, dbt_project.yml configs) they turn
 * the rendered text into the value's type: `"{{ env_var('PORT') | as_number }}"`
 * is the number 5432, `as_bool` a boolean, `as_native` a list, mapping,
 * number or boolean read as Python literals.
 */

/** Python's `literal_eval` for the literals configs hold: JSON with True/False/None and single quotes. */
function literal(text: string): unknown {
  const t = text.trim();
  if (/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(t)) return Number(t);
  if (t === 'True' || t === 'False') return t === 'True';
  if (t === 'None') return null;
  if (/^[[{('"]/.test(t)) {
    const json = t
      .replace(/'((?:[^'\\]|\\.)*)'/g, (_m, body: string) => JSON.stringify(body.replace(/\\'/g, "'")))
      .replace(/\bTrue\b/g, 'true')
      .replace(/\bFalse\b/g, 'false')
      .replace(/\bNone\b/g, 'null')
      .replace(/,\s*([\]}])/g, '$1');
    try {
      return JSON.parse(json.startsWith('(') ? `[${json.slice(1, -1)}]` : json);
    } catch {
      return text;
    }
  }
  return text;
}

export const dbtFilters: Readonly<Record<string, (value: unknown) => unknown>> = {
  as_text: (v) => (v === null || v === undefined ? '' : String(v)),
  as_number: (v) => {
    if (typeof v === 'number') return v;
    // Text that is no number stays as it is: profiles.yml checks the output in use names an unset env_var().
    const n = Number(String(v).trim());
    return String(v).trim() === '' || Number.isNaN(n) ? v : n;
  },
  as_bool: (v) => {
    if (typeof v === 'boolean') return v;
    const s = String(v).trim().toLowerCase();
    if (s === 'true') return true;
    if (s === 'false') return false;
    return v;
  },
  as_native: (v) => (typeof v === 'string' ? literal(v) : v),
};
