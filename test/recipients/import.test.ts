// `herald recipients import FILE` and `herald recipients export` (docs/recipients.md): streamed
// in batches, every row checked as the API checks it, refused rows reported by line number and
// never half-written, and an export the import reads back.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createWriteStream, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { herald } from '../helpers/cli.ts';
import { tempDir } from '../helpers/config.ts';

/** Reads the recipients of a data directory's store. */
async function recipientsOf(dataDir: string, tenant = 'default') {
  const store = createSqliteStore(dataDir);
  try {
    return await store.recipients.list(tenant, { limit: 1_000_000 });
  } finally {
    await store.close();
  }
}

/** Writes `count` CSV rows through a stream (the test never holds the file either). */
async function writeCsv(path: string, count: number): Promise<void> {
  const file = createWriteStream(path);
  file.write('recipientId,email,phone,locale,timezone,name,push,data\n');
  for (let n = 0; n < count; n++) {
    const row =
      n % 2 === 0
        ? `u${n},u${n}@example.com,+1555${String(n).padStart(7, '0')},fr-CA,Europe/Paris,"User ${n}, the ${n}th",,"{""n"":${n}}"\n`
        : `u${n},,,,,,"[{""deviceToken"":""tok${String(n).padStart(8, '0')}"",""platform"":""fcm""}]",\n`;
    if (!file.write(row)) await new Promise<void>((resolve) => file.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve, reject) =>
    file.end((error?: Error | null) => (error ? reject(error) : resolve())),
  );
}

describe('herald recipients import and export', () => {
  it('imports a CSV file of 100,000 rows in batches', async (t) => {
    const dataDir = tempDir();
    const file = join(tempDir(), 'people.csv');
    await writeCsv(file, 100_000);
    const started = performance.now();
    const run = await herald(['recipients', 'import', file], { HERALD_DATA_DIR: dataDir });
    const seconds = (performance.now() - started) / 1000;
    t.diagnostic(
      `100,000 rows imported in ${seconds.toFixed(1)} s (${Math.round(100_000 / seconds)}/s, under load)`,
    );
    assert.equal(run.code, 0, run.err);
    assert.match(run.out, /^Imported 100,000 recipients into tenant default; refused 0 rows\.$/);
    const stored = await recipientsOf(dataDir);
    assert.equal(stored.length, 100_000);
    const byId = new Map(stored.map((r) => [r.id, r.profile]));
    assert.deepEqual(byId.get('u42'), {
      email: 'u42@example.com',
      phone: '+15550000042',
      locale: 'fr-CA',
      timezone: 'Europe/Paris',
      name: 'User 42, the 42th',
      data: { n: 42 },
    });
    assert.deepEqual(byId.get('u99999'), { push: [{ deviceToken: 'tok00099999', platform: 'fcm' }] });
  });

  it('refuses bad rows alone, by line number, and writes nothing of them', async () => {
    const dataDir = tempDir();
    const store = createSqliteStore(dataDir);
    await store.recipients.put('acme', [{ id: 'kept', profile: { email: 'kept@example.com' } }], 0);
    await store.close();
    const file = join(tempDir(), 'mixed.csv');
    const huge = 'x'.repeat(10 * 1024 * 1024);
    writeFileSync(
      file,
      [
        'recipientId,email,phone,name,data',
        'good-1,good1@example.com,,,',
        'kept,not-an-email,,Changed,', // line 3: the stored one stays as it was
        'good-2,,+15550101234,"Two, with a comma",',
        `huge,,,${huge},`, // line 5: a 10 MB line
        'bad id,,,,',
        'short,row',
        'data,,,,"[1,2]"',
        'json,,,,{not json',
        '"quoted\nacross lines",,,,', // lines 10-11: a bad ID spanning two lines
        'good-3,,,"Three ""the third""",',
        '',
      ].join('\n'),
    );
    const run = await herald(['recipients', 'import', file, '--tenant', 'acme'], {
      HERALD_DATA_DIR: dataDir,
    });
    assert.equal(run.code, 1, 'refused rows make the exit code 1');
    const lines = run.out.split('\n');
    assert.equal(lines[0], 'Imported 3 recipients into tenant acme; refused 7 rows:');
    assert.deepEqual(lines.slice(1), [
      '  line 3: email must be an email address such as ada@example.com',
      '  line 5: the row is longer than 262,144 characters',
      '  line 6: recipientId must be a recipient ID: 1 to 128 letters, digits or the characters . _ : @ + -',
      '  line 7: the row has 2 fields where the header has 5',
      '  line 8: data must be object',
      '  line 9: data must be JSON text',
      '  line 10: recipientId must be a recipient ID: 1 to 128 letters, digits or the characters . _ : @ + -',
    ]);
    const stored = await recipientsOf(dataDir, 'acme');
    assert.deepEqual(
      stored.map((r) => r.id),
      ['good-1', 'good-2', 'good-3', 'kept'],
    );
    assert.deepEqual(stored.find((r) => r.id === 'kept')?.profile, { email: 'kept@example.com' });
    assert.equal(stored.find((r) => r.id === 'good-3')?.profile.name, 'Three "the third"');
  });

  it('reads JSON lines, and stops before writing anything at a CSV header it does not know', async () => {
    const dataDir = tempDir();
    const dir = tempDir();
    const jsonl = join(dir, 'people.data'); // no telling extension: the content says JSON lines
    writeFileSync(
      jsonl,
      '{"recipientId":"j1","email":"j1@example.com","locale":"en-gb"}\r\n\n[1]\n{"recipientId":"j2","push":[{"deviceToken":"abcdefgh12","platform":"apns"}]}\n{"recipientId":"j3","colour":"red"}\n{"recipientId":"j4","preferences":{"channels":{"fax":true}}}\n',
    );
    const run = await herald(['recipients', 'import', jsonl], { HERALD_DATA_DIR: dataDir });
    assert.equal(run.code, 1);
    assert.deepEqual(run.out.split('\n'), [
      'Imported 2 recipients into tenant default; refused 3 rows:',
      '  line 3: the row must be a JSON object',
      "  line 5: colour must NOT have additional property 'colour'",
      '  line 6: preferences.channels must name channels of email, sms, push, inapp, not fax',
    ]);
    assert.equal(
      (await recipientsOf(dataDir)).find((r) => r.id === 'j4'),
      undefined,
      'nothing of it written',
    );
    assert.equal((await recipientsOf(dataDir)).find((r) => r.id === 'j1')?.profile.locale, 'en-GB');

    const csv = join(dir, 'people.csv');
    writeFileSync(csv, 'recipientId,email,mobile\nz1,z1@example.com,+15550101234\n');
    const refused = await herald(['recipients', 'import', csv, '--tenant', 'zed'], {
      HERALD_DATA_DIR: dataDir,
    });
    assert.equal(refused.code, 1);
    assert.match(refused.err, /Nothing imported: unknown CSV column mobile/);
    assert.deepEqual(await recipientsOf(dataDir, 'zed'), []);
    const missing = await herald(['recipients', 'import', join(dir, 'nope.csv')], {
      HERALD_DATA_DIR: dataDir,
    });
    assert.equal(missing.code, 1);
    assert.equal((await herald(['recipients', 'import'], { HERALD_DATA_DIR: dataDir })).code, 2);
  });

  it('exports JSON lines that import back to the same recipients', async () => {
    const env = { ...process.env, HERALD_DATA_DIR: tempDir(), LOG_LEVEL: 'silent' };
    const dir = tempDir();
    const source = join(dir, 'source.csv');
    await writeCsv(source, 2500);
    const imported = spawnSync(
      process.execPath,
      ['bin/herald.js', 'recipients', 'import', source, '--tenant', 'acme'],
      {
        env,
        encoding: 'utf8',
      },
    );
    assert.equal(imported.status, 0, imported.stderr);
    // Preferences travel with the profile: set two recipients' before the export.
    const choices = { channels: { sms: false }, categories: { news: { email: false, inapp: true } } };
    const store = createSqliteStore(env.HERALD_DATA_DIR);
    try {
      await store.recipients.setPreferences('acme', 'u0', choices, Date.now());
      await store.recipients.setPreferences(
        'acme',
        'u7',
        { channels: { push: true }, categories: {} },
        Date.now(),
      );
    } finally {
      await store.close();
    }
    const exported = spawnSync(
      process.execPath,
      ['bin/herald.js', 'recipients', 'export', '--tenant', 'acme'],
      {
        env,
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    assert.equal(exported.status, 0, exported.stderr);
    const lines = exported.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 2500);
    assert.deepEqual(JSON.parse(lines[0] as string), {
      recipientId: 'u0',
      email: 'u0@example.com',
      phone: '+15550000000',
      locale: 'fr-CA',
      timezone: 'Europe/Paris',
      name: 'User 0, the 0th',
      data: { n: 0 },
      preferences: choices,
    });
    assert.deepEqual(JSON.parse(lines[1] as string).preferences, { channels: {}, categories: {} });
    // Read back into another store, it exports the same lines.
    const copy = join(dir, 'export.jsonl');
    writeFileSync(copy, exported.stdout);
    const elsewhere = { ...env, HERALD_DATA_DIR: tempDir() };
    const back = spawnSync(
      process.execPath,
      ['bin/herald.js', 'recipients', 'import', copy, '--tenant', 'acme'],
      {
        env: elsewhere,
        encoding: 'utf8',
      },
    );
    assert.equal(back.status, 0, back.stderr);
    const again = spawnSync(process.execPath, ['bin/herald.js', 'recipients', 'export', '--tenant', 'acme'], {
      env: elsewhere,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    assert.equal(again.stdout, exported.stdout);
    const u7 = (await recipientsOf(elsewhere.HERALD_DATA_DIR, 'acme')).find((r) => r.id === 'u7');
    assert.deepEqual(u7?.preferences, { channels: { push: true }, categories: {} });
  });
});
