/** `target_options.column_casing` applied to one source column name. */
export function castColumnName(name: string, casing: 'source' | 'lower' | 'upper' | 'snake' | undefined): string {
  switch (casing ?? 'source') {
    case 'lower':
      return name.toLowerCase();
    case 'upper':
      return name.toUpperCase();
    case 'snake':
      return name
        .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
        .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
        .replace(/[^A-Za-z0-9]+/g, '_')
        .replace(/^_+|_+$/g, '')
        .toLowerCase();
    default:
      return name;
  }
}
