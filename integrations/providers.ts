import { AppError } from '../core/errors';
import type { SecretBox } from '../infra/secrets';
import type { IntegrationRow } from '../model/integrations';
import type { Provider } from './provider';
import { searchConsoleProvider } from './search-provider';
import { stripeProvider } from './stripe-provider';

/** Every provider a site can connect, by the name in /sites/{id}/integrations/{provider}. */
const PROVIDERS: Record<string, Provider<any, any>> = {
  [stripeProvider.name]: stripeProvider,
  [searchConsoleProvider.name]: searchConsoleProvider,
};

export const PROVIDER_NAMES = Object.keys(PROVIDERS);

/** The provider called `name`, or the 404 that lists the ones there are. */
export function providerNamed(name: string): Provider<unknown, unknown> {
  const provider = Object.hasOwn(PROVIDERS, name) ? PROVIDERS[name] : undefined;
  if (!provider) throw new AppError(404, 'not_found', `There is no integration provider "${name}"; providers: ${PROVIDER_NAMES.join(', ')}.`);
  return provider;
}

/** Credentials are sealed as JSON (infra/secrets.ts) and opened only by the worker that imports. */
export const sealCredentials = (secrets: SecretBox, credentials: unknown): string => secrets.seal(JSON.stringify(credentials));

export const openCredentials = <C>(secrets: SecretBox, row: IntegrationRow): C => JSON.parse(secrets.open(row.credentials)) as C;
