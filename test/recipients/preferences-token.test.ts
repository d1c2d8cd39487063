import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { systemClock } from '../../src/clock.ts';
import { createPreferenceTokens } from '../../src/recipients/preferences-token.ts';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { tempDir } from '../helpers/config.ts';

describe('preferences tokens', () => {
  it('open to their recipient, one spelling only; an altered or foreign token opens to nothing', async () => {
    const dir = tempDir();
    const store = createSqliteStore(dir);
    try {
      const tokens = createPreferenceTokens(store.auth, systemClock, undefined);
      const token = await tokens.make({ tenant: 't1', id: 'ada@example.com' });
      assert.equal(token, await tokens.make({ tenant: 't1', id: 'ada@example.com' }));
      assert.deepEqual(await tokens.open(token), { tenant: 't1', id: 'ada@example.com' });
      const [payload, mac] = token.split('.') as [string, string];
      const other = await tokens.make({ tenant: 't2', id: 'ada@example.com' });
      const forged = [
        `${payload}.${(other.split('.') as [string, string])[1]}`,
        `${payload}x.${mac}`,
        `${payload}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`,
        `${payload}=.${mac}`,
        `${payload}.${mac}.`,
        '',
        '.',
      ];
      for (const bad of forged) assert.equal(await tokens.open(bad), undefined, bad);
      // Another server's key (another data directory) does not open it.
      const elsewhere = createSqliteStore(tempDir());
      try {
        assert.equal(
          await createPreferenceTokens(elsewhere.auth, systemClock, undefined).open(token),
          undefined,
        );
      } finally {
        await elsewhere.close();
      }
    } finally {
      await store.close();
    }
  });
});
