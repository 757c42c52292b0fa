/**
 * The presets the twin's own app serves by name, read from the construct's provider facts alone:
 * the command's usage lists them without loading the CDK.
 */
import { ALL_PROVIDER_FACTS } from '../../../../lib/contract';

/** The twin's providers of the construct's presets, by preset name, among `kinds`. */
const twinProviders = (kinds: (facts: (typeof ALL_PROVIDER_FACTS)[number]) => boolean): Readonly<Record<string, { readonly adapter: string }>> =>
  Object.fromEntries(ALL_PROVIDER_FACTS.filter(kinds).map((facts) => [facts.kind, { adapter: facts.kind }]));

/** The providers the twin can serve by name: the construct's presets (the generic HMAC one is described by its settings). */
export const TWIN_PROVIDERS = twinProviders((facts) => !facts.requests.configuredScheme && !facts.requests.polledOnly);

/** Presets the twin's app serves only with polling given (a batch API posts nothing: it is polled, never served). */
export const POLLED_TWIN_PROVIDERS = twinProviders((facts) => facts.requests.polledOnly);
