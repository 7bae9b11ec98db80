/**
 * The store URLs LOCUS_STORE accepts, by scheme (pure: config validation uses it without
 * loading any adapter). open-store.ts maps each scheme to its adapter.
 */

/** Every scheme a store URL may start with. */
export const STORE_SCHEMES = ['sqlite:', 'mongodb://', 'mongodb+srv://'] as const;
export type StoreScheme = (typeof STORE_SCHEMES)[number];

/** The scheme of a store URL, or null when no adapter serves it. */
export function storeSchemeOf(url: string): StoreScheme | null {
  return STORE_SCHEMES.find((scheme) => url.startsWith(scheme)) ?? null;
}

/** Why a store URL cannot be used, or null when it can (only its form: nothing is opened). */
export function storeUrlProblem(url: string): string | null {
  const scheme = storeSchemeOf(url);
  const expected = 'sqlite:<path> (embedded), or mongodb://<host>[:port][/database] or mongodb+srv://<host>[/database] (cluster mode)';
  if (scheme === null) return `LOCUS_STORE must be ${expected}, got "${url}"`;
  const rest = url.slice(scheme.length);
  if (scheme === 'sqlite:') return rest.length === 0 ? `LOCUS_STORE must be ${expected}, got "${url}"` : null;
  const authority = rest.split('/')[0] ?? '';
  const host = authority.slice(authority.lastIndexOf('@') + 1).split('?')[0] ?? '';
  if (host.length === 0) return `LOCUS_STORE: ${scheme} needs a host, as in ${scheme}localhost${scheme === 'mongodb://' ? ':27017' : ''}/locus`;
  return null;
}

/** The URL with any password replaced by `***`, for messages and logs. */
export function redactStoreUrl(url: string): string {
  return url.replace(/^(mongodb(?:\+srv)?:\/\/)([^@/]*)@/, (_m, scheme: string, auth: string) => {
    const colon = auth.indexOf(':');
    return `${scheme}${colon < 0 ? auth : `${auth.slice(0, colon)}:***`}@`;
  });
}
