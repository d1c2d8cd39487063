import { createInterface } from 'node:readline';
import { UsageError } from './support.ts';

/**
 * The password of `--password-stdin`, kept out of the process list and the shell history. At a
 * terminal: asked twice without echo and compared, as passwd does. From a pipe: its first line,
 * without waiting for the pipe to close.
 */
export async function readPassword(): Promise<string> {
  if (!process.stdin.isTTY) return readLine();
  const password = await promptHidden('Password: ');
  if ((await promptHidden('Repeat the password: ')) !== password) {
    throw new UsageError('the two passwords differ');
  }
  return password;
}

/** The first line of stdin; the rest is left unread. */
function readLine(): Promise<string> {
  const lines = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
  return new Promise((resolve) => {
    let first = '';
    lines.once('line', (line) => {
      first = line;
      lines.close();
    });
    // An empty pipe closes without a line: the empty password is then refused as missing.
    lines.once('close', () => {
      // An open pipe would keep the process alive after the command is done.
      process.stdin.destroy();
      resolve(first);
    });
  });
}

/** Asks on stderr and reads what is typed with the terminal's echo off (raw mode). */
function promptHidden(prompt: string): Promise<string> {
  const { stdin, stderr } = process;
  // Echo off before the prompt shows: what is typed once it is seen is never echoed.
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  stdin.resume();
  stderr.write(prompt);
  return new Promise((resolve, reject) => {
    let typed = '';
    const finish = (error?: Error) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      stderr.write('\n');
      if (error) reject(error);
      else resolve(typed);
    };
    const onData = (text: string) => {
      for (const char of text) {
        if (char === '\r' || char === '\n' || char === '\u0004') return finish();
        if (char === '\u0003') return finish(new Error('cancelled')); // Ctrl-C
        if (char === '\u007f' || char === '\b') typed = [...typed].slice(0, -1).join('');
        else if (char >= ' ') typed += char;
      }
    };
    stdin.on('data', onData);
  });
}
