// Provider names and their issuers (SPEC P4 and the provider-name registry of SPEC §18.2).
//
// A history names providers by the names routes write (fast-agent's session.json records
// `responses`); whether a replay item may be sent is decided on issuers. Each name is mapped once,
// by the registry extended by the caller's mapping, and issuers are compared as exact strings.

/** §18.2, in the table's order (schema/provider-names.v1.json holds the same as data). */
export const PROVIDER_NAME_REGISTRY = Object.freeze({
  'openai': 'openai',
  'codex': 'codex',
  'xai': 'xai',
  'responses': 'openai',
  'codexresponses': 'codex',
  'openai-codex': 'codex',
  'openai.responses': 'openai',
});

/**
 * P4: the issuer of `name`. A caller's entry (`providerNames`, name → issuer) replaces the
 * registry's; the result is never mapped again; a name neither lists is its own issuer.
 * @param {string} name
 * @param {Record<string, string>} [providerNames]
 * @returns {string}
 */
export function issuerOf(name, providerNames) {
  if (providerNames !== undefined && Object.hasOwn(providerNames, name)) return providerNames[name];
  return Object.hasOwn(PROVIDER_NAME_REGISTRY, name) ? PROVIDER_NAME_REGISTRY[name] : name;
}
