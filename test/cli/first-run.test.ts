// The first run explains itself: help for every command, a hint when nobody can sign in yet,
// and logs for people on a terminal or for machines.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { prettyStream } from '../../src/http/logger.ts';
import { tempDir } from '../helpers/config.ts';
import { runHerald, startHeraldProcess } from '../helpers/herald-process.ts';

const ports = { HERALD_HOST: '127.0.0.1', HERALD_API_PORT: '0', HERALD_GATEWAY_PORT: '0' };

describe('the first run', () => {
  it('shows usage and examples for herald --help and for every command', async () => {
    const top = await runHerald(['--help'], {});
    assert.equal(top.code, 0);
    assert.match(top.output, /Usage: herald <command>/);
    for (const command of ['start', 'users', 'clients', 'keys', 'queues', 'openapi']) {
      const help = await runHerald([command, '--help'], {});
      assert.equal(help.code, 0, `${command} --help`);
      assert.match(help.output, /Usage/, command);
      assert.match(help.output, new RegExp(`Examples:\\n\\s+.*herald ${command}`), command);
    }
  });

  it('lists every subcommand in herald --help and prints the version', async () => {
    const top = (await runHerald(['--help'], {})).output;
    const listed = (command: string, action: string) =>
      new RegExp(`^\\s+${command} (\\[?[a-z-]+\\]? \\| )*\\[?${action}\\]?\\b`, 'm').test(top);
    const actions: Record<string, string[]> = {
      users: ['add', 'list', 'disable'],
      clients: ['add', 'list', 'rotate', 'disable'],
      keys: ['rotate', 'list', 'remove', 'rotate-unsubscribe'],
      queues: ['list', 'pause', 'resume'],
    };
    for (const [command, names] of Object.entries(actions)) {
      // Each command's own help names the actions it runs: the top usage lists them all.
      const own = (await runHerald([command, '--help'], {})).output;
      for (const action of names) {
        assert.match(
          own,
          new RegExp(`herald ${command} (\\S+ )*\\[?${action}\\b|${action}\\|`),
          `${command} ${action}`,
        );
        assert.ok(listed(command, action), `herald --help lists "${command} ${action}"`);
      }
    }
    const version = await runHerald(['--version'], {});
    assert.equal(version.code, 0);
    const { version: expected } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    assert.equal(version.output.trim(), `herald ${expected}`);
  });

  it('says how to create the first user when the store has none', async () => {
    const herald = await startHeraldProcess('empty', {
      ...ports,
      HERALD_DATA_DIR: tempDir(),
      LOG_LEVEL: 'warn',
    });
    try {
      await herald.stop();
      assert.match(herald.output(), /No user can sign in yet/);
      assert.match(herald.output(), /users add --email you@example\.com --password-stdin --role admin/);
      assert.match(herald.output(), /HERALD_ADMIN_EMAIL and HERALD_ADMIN_PASSWORD/);
    } finally {
      await herald.stop();
    }
    const seeded = await startHeraldProcess('seeded', {
      ...ports,
      HERALD_DATA_DIR: tempDir(),
      LOG_LEVEL: 'warn',
      HERALD_ADMIN_EMAIL: 'first@example.com',
      HERALD_ADMIN_PASSWORD: 'a long enough passphrase',
    });
    await seeded.stop();
    assert.doesNotMatch(seeded.output(), /No user can sign in yet/);
  });

  it('logs JSON when stdout is not a terminal, readable lines with HERALD_LOG_FORMAT=pretty', async () => {
    const json = await startHeraldProcess('json logs', {
      ...ports,
      HERALD_DATA_DIR: tempDir(),
      LOG_LEVEL: 'info',
    });
    await json.stop();
    const entries = json
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'));
    assert.ok(entries.some((line) => /Server listening/.test(JSON.parse(line).msg)));
    const pretty = await startHeraldProcess('pretty logs', {
      ...ports,
      HERALD_DATA_DIR: tempDir(),
      LOG_LEVEL: 'info',
      HERALD_LOG_FORMAT: 'pretty',
    });
    await pretty.stop();
    assert.match(pretty.output(), /^\d\d:\d\d:\d\d\.\d{3} INFO {2}Server listening at http/m);
    assert.ok(
      !pretty
        .output()
        .split('\n')
        .some((line) => line.startsWith('{"level"')),
    );
  });

  it('formats an entry as one line, its request and stack included, keeping what pino redacted', () => {
    let written = '';
    const stream = prettyStream({ write: (text: string) => (written += text) });
    stream.write(
      `${JSON.stringify({
        level: 50,
        time: Date.UTC(2026, 0, 2, 3, 4, 5, 6),
        pid: 1,
        hostname: 'h',
        msg: 'request failed',
        req: { method: 'POST', url: '/notifications' },
        res: { statusCode: 500 },
        responseTime: 12.34,
        body: { password: '[redacted]' },
        err: { stack: 'Error: boom\n    at x' },
      })}\n`,
    );
    assert.equal(
      written,
      '03:04:05.006 \x1b[31mERROR\x1b[0m request failed POST /notifications 500 12.3 ms body={"password":"[redacted]"}\nError: boom\n    at x\n',
    );
  });
});
