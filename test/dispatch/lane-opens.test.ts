// Issue 48, PostgreSQL: a worker opens its urgent lane's two connections when it starts, so that
// the first CRITICAL does not wait for their connection, authentication and type lookup (a first
// lane cycle took 136 to 809 ms under load, decision 0062). No notification is sent here: the
// connections must be there anyway, named as the lane names them.
import { after, describe, it } from 'node:test';
import { connectPostgres, type Sql } from '../../src/store/postgres/connect.ts';
import { tempDir } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import { type HeraldProcess, startHeraldProcess } from '../helpers/herald-process.ts';
import { sharedPostgres, stopSharedPostgres } from '../helpers/postgres.ts';

describe("the urgent lane's connections on PostgreSQL", () => {
  let sql: Sql | undefined;
  let worker: HeraldProcess | undefined;
  after(async () => {
    await worker?.stop(5000);
    await sql?.end({ timeout: 1 });
    await stopSharedPostgres();
  });

  it('are open once a worker has started, before any urgent work', async () => {
    const server = await sharedPostgres();
    const url = await server.createDatabase('herald_lane_opens');
    worker = await startHeraldProcess('lane-opens-worker', {
      DATABASE_URL: url,
      HERALD_ROLES: 'worker',
      HERALD_JWT_ISSUER: 'http://herald.test',
      HERALD_HOST: '127.0.0.1',
      HERALD_DATA_DIR: tempDir('herald-lane-opens-'),
      LOG_LEVEL: 'warn',
    });
    sql = connectPostgres(url, { max: 1 });
    const database = new URL(url).pathname.slice(1);
    const lanes = async () =>
      (
        await (sql as Sql)<{ name: string }[]>`SELECT application_name AS name FROM pg_stat_activity
          WHERE datname = ${database} AND application_name LIKE '% urgent %' ORDER BY 1`
      ).map((row) => row.name.replace(/^.* urgent /, ''));
    await eventually(
      async () => (await lanes()).join() === 'claims,writes',
      20_000,
      "the lane's claims and writes connections",
      50,
    );
  });
});
