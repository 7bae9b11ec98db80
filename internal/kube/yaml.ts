/**
 * A small YAML writer for JSON data (manifests such as the Realm CRD): block mappings and
 * sequences, strings plain when YAML reads them back as the same string and double-quoted
 * (JSON escapes, which YAML shares) otherwise. Pure; not a general YAML library.
 */
export type JsonData = string | number | boolean | null | readonly JsonData[] | { readonly [key: string]: JsonData };

// Plain scalars that YAML 1.1 or 1.2 would read as something other than a string.
const RESERVED = /^(?:true|false|yes|no|on|off|y|n|null|~)$/i;
const PLAIN = /^[A-Za-z_/][A-Za-z0-9_./-]*$/;

function scalar(value: string | number | boolean | null): string {
  if (value === null) return 'null';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`yaml: ${value} is not a JSON number`);
    return String(value);
  }
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return PLAIN.test(value) && !RESERVED.test(value) ? value : JSON.stringify(value);
}

function isScalar(value: JsonData): value is string | number | boolean | null {
  return value === null || typeof value !== 'object';
}

function isEmpty(value: JsonData): boolean {
  return Array.isArray(value) ? value.length === 0 : value !== null && typeof value === 'object' && Object.keys(value).length === 0;
}

function emptyForm(value: JsonData): string {
  return Array.isArray(value) ? '[]' : '{}';
}

function lines(value: JsonData, indent: string, out: string[]): void {
  if (Array.isArray(value)) {
    for (const item of value as readonly JsonData[]) {
      if (isScalar(item)) out.push(`${indent}- ${scalar(item)}`);
      else if (isEmpty(item)) out.push(`${indent}- ${emptyForm(item)}`);
      else {
        // The first line of the nested block goes after the dash.
        const nested: string[] = [];
        lines(item, `${indent}  `, nested);
        const first = nested[0] ?? '';
        out.push(`${indent}- ${first.slice(indent.length + 2)}`, ...nested.slice(1));
      }
    }
    return;
  }
  for (const [key, item] of Object.entries(value as { readonly [key: string]: JsonData })) {
    const name = scalar(key);
    if (isScalar(item)) out.push(`${indent}${name}: ${scalar(item)}`);
    else if (isEmpty(item)) out.push(`${indent}${name}: ${emptyForm(item)}`);
    else {
      out.push(`${indent}${name}:`);
      lines(item, Array.isArray(item) ? indent : `${indent}  `, out);
    }
  }
}

/** `value` (an object or array) as a YAML document, ending in a newline. */
export function toYaml(value: JsonData, header = ''): string {
  if (isScalar(value)) throw new Error('yaml: the document must be an object or an array');
  const out: string[] = [];
  lines(value, '', out);
  return `${header}${out.join('\n')}\n`;
}
