import { main } from '../../src/cli/main.ts';

/** Runs a herald command in-process (LOG_LEVEL silent unless `env` says) and captures what it prints. */
export async function herald(args: string[], env: Record<string, string>) {
  const out: string[] = [];
  const err: string[] = [];
  const log = console.log;
  const error = console.error;
  console.log = (...parts: unknown[]) => out.push(parts.join(' '));
  console.error = (...parts: unknown[]) => err.push(parts.join(' '));
  try {
    const code = await main(args, { LOG_LEVEL: 'silent', ...env });
    return { code, out: out.join('\n'), err: err.join('\n') };
  } finally {
    console.log = log;
    console.error = error;
  }
}
