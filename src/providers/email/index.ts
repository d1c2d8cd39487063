import type { Provider, ProviderDeps } from '../types.ts';
import { createSmtpProvider } from './smtp.ts';

/** Email providers. */
export { createSmtpProvider, NOTIFICATION_ID_HEADER, type SmtpConfig } from './smtp.ts';

/** The email providers as registry factories: built only when SMTP_URL is set. */
export const emailProviderFactories: ((deps: ProviderDeps) => Provider | undefined)[] = [
  (deps) => {
    const smtp = deps.config.providers.smtp;
    return smtp ? createSmtpProvider(smtp, deps) : undefined;
  },
];
