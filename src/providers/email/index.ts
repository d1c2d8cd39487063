import { FALLBACK_SUFFIX } from '../../notifications/delivery-report.ts';
import type { Provider, ProviderDeps } from '../types.ts';
import { createSmtpProvider } from './smtp.ts';

/** Email providers. */
export { createSmtpProvider, NOTIFICATION_ID_HEADER, type SmtpConfig } from './smtp.ts';

/**
 * The email providers as registry factories, primary first: SMTP when SMTP_URL is set, and its
 * fallback (`smtp-fallback`, same From) when SMTP_FALLBACK_URL is set too.
 */
export const emailProviderFactories: ((deps: ProviderDeps) => Provider | undefined)[] = [
  (deps) => {
    const smtp = deps.config.providers.smtp;
    return smtp ? createSmtpProvider(smtp, deps) : undefined;
  },
  (deps) => {
    const { smtp, smtpFallbackUrl } = deps.config.providers;
    return smtp && smtpFallbackUrl
      ? createSmtpProvider({ url: smtpFallbackUrl, from: smtp.from }, deps, `smtp${FALLBACK_SUFFIX}`)
      : undefined;
  },
];
