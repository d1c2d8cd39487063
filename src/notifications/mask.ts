import type { Channel, Recipient } from './model.ts';

/** `ada@example.com` → `a***@example.com`: the first character and the domain stay. */
function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at <= 0) return '***';
  return `${email[0]}***${email.slice(at)}`;
}

/** `+15550101234` → `+*******1234`: the last 4 digits stay, the length shows. */
function maskPhone(phone: string): string {
  const digits = phone.replace(/\D/g, '');
  if (digits.length <= 4) return `+${'*'.repeat(digits.length)}`;
  return `+${'*'.repeat(digits.length - 4)}${digits.slice(-4)}`;
}

/** A push token or endpoint keeps its last 6 characters. */
function maskTail(value: string): string {
  return value.length <= 6 ? '******' : `***${value.slice(-6)}`;
}

/** The recipient as responses show it (an email keeps its first character and domain, a phone its last 4 digits). Push keys are never shown. */
export function maskRecipient(recipient: Recipient): Record<string, unknown> {
  // The caller's own ID for a person (docs/sending-to-people.md) is shown as given: it is no address.
  if (recipient.id !== undefined) return { id: recipient.id };
  if (recipient.email !== undefined) return { email: maskEmail(recipient.email) };
  if (recipient.phone !== undefined) return { phone: maskPhone(recipient.phone) };
  if (recipient.subscription !== undefined) {
    return { subscription: { endpoint: maskTail(recipient.subscription.endpoint) } };
  }
  if (recipient.deviceToken !== undefined) {
    return { deviceToken: maskTail(recipient.deviceToken), platform: recipient.platform };
  }
  return {};
}

/** A suppression key as responses show it: masked like the recipient it came from. */
export function maskKey(channel: Channel, key: string): string {
  if (channel === 'email') return maskEmail(key);
  if (channel === 'sms') return maskPhone(key);
  return maskTail(key);
}
