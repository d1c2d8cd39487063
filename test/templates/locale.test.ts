import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';

// Renders in a child process whose host locale is German, since the locale Intl defaults to is
// fixed when a process starts.
const LIQUID = new URL('../../src/templates/liquid.ts', import.meta.url).href;
const RENDER = `
import { parseContent, renderParsed } from '${LIQUID}';
const parsed = parseContent({ text: '{{ at | date: "%A %d %B %Y" }}' });
process.stdout.write(renderParsed(parsed, { at: '2026-01-15T10:00:00Z' }).text);
`;

describe('template dates', () => {
  it('render the same whatever the host locale', () => {
    const german = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', RENDER], {
      env: { ...process.env, LC_ALL: 'de_DE.UTF-8', LANG: 'de_DE.UTF-8' },
      encoding: 'utf8',
    });
    assert.equal(german, 'Thursday 15 January 2026');
  });
});
