import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { SECTIONS, variablesOf } from '../../src/config/schema.ts';

/** `| \`NAME\` | default | meaning |` rows of docs/configuration.md. */
function documented(): Map<string, string> {
  const rows = new Map<string, string>();
  for (const line of readFileSync('docs/configuration.md', 'utf8').split('\n')) {
    const match = /^\| `([A-Z][A-Z0-9_]+)` \| ([^|]+) \|/.exec(line);
    if (match) rows.set(match[1] as string, (match[2] as string).trim());
  }
  return rows;
}

const shown = (value: unknown) => `\`${Array.isArray(value) ? value.join(',') : String(value)}\``;

describe('docs/configuration.md', () => {
  const variables = SECTIONS.flatMap((section) => variablesOf(section));
  const rows = documented();

  it('lists every variable the schemas declare, and no other', () => {
    assert.deepEqual([...rows.keys()].sort(), variables.map((v) => v.env).sort());
  });

  it('states the default the code applies', () => {
    for (const v of variables) {
      const cell = rows.get(v.env);
      if (v.default !== undefined) assert.equal(cell, shown(v.default), v.env);
      else if (v.derived !== undefined) assert.equal(cell?.replaceAll('`', ''), v.derived, v.env);
      else assert.equal(cell, 'unset', v.env);
    }
  });
});
