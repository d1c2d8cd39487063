/** Email providers. */
export { createSmtpProvider, NOTIFICATION_ID_HEADER, type SmtpConfig } from './smtp.ts';
