/** A Message-ID without its angle brackets, the form Herald records as the SMTP provider message id. */
export function bareMessageId(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const bare = value.trim().replace(/^<|>$/g, '');
  return bare ? bare : undefined;
}
