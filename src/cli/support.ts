import { type ParseArgsConfig, parseArgs } from 'node:util';
import { systemClock } from '../clock.ts';
import { type Config, ConfigError, loadConfig } from '../config/config.ts';
import { createStore, describeStore } from '../store/create.ts';
import type { Store } from '../store/port/index.ts';

/** A mistake in the command line; printed with the usage text, exit code 2. */
export class UsageError extends Error {}

/** What a management command works with. */
export interface CliContext {
  config: Config;
  store: Store;
  clock: typeof systemClock;
  out: (line: string) => void;
}

/**
 * Runs a management command against the configured store: config errors and usage errors are
 * printed readably (exit 2), operational errors print their message (exit 1).
 */
export async function runCli(
  env: NodeJS.ProcessEnv,
  usage: string,
  action: (context: CliContext) => Promise<number>,
): Promise<number> {
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      return 2;
    }
    throw error;
  }
  const store = await createStore(config);
  // On stderr, so a list stays parseable: which store this command read or changed.
  console.error(`Store: ${describeStore(config)}`);
  try {
    return await action({ config, store, clock: systemClock, out: (line) => console.log(line) });
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`${error.message}\n${usage}`);
      return 2;
    }
    console.error(`Error: ${(error as Error).message}`);
    return 1;
  } finally {
    await store.close();
  }
}

/** Pads columns for list output. */
export function row(cells: readonly string[], widths: readonly number[]): string {
  return cells
    .map((cell, i) => cell.padEnd(widths[i] ?? 0))
    .join('  ')
    .trimEnd();
}

/**
 * A command's --options, strictly (an unknown option, or a stray argument where the command takes
 * none, is a UsageError).
 */
export function parseOptions<O extends NonNullable<ParseArgsConfig['options']>>(
  args: string[],
  options: O,
  allowPositionals = false,
) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}
