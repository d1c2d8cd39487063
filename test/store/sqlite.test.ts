// Runs every store behaviour suite against the embedded SQLite adapter. Each area appends one line.
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { tempDir } from '../helpers/config.ts';
import { authStoreSuite } from './auth.suite.ts';
import { lanesSuite } from './lanes.suite.ts';
import { limitsSuite } from './limits.suite.ts';
import { notificationStoreSuite } from './notifications.suite.ts';
import { processMetricsSuite } from './process-metrics.suite.ts';
import { queueSuite } from './queue.suite.ts';
import { reportsSuite } from './reports.suite.ts';
import { sandboxSuite } from './sandbox.suite.ts';
import { templateStoreSuite } from './templates.suite.ts';

const openSqlite = async () => createSqliteStore(tempDir());

reportsSuite('sqlite', openSqlite);
notificationStoreSuite('sqlite', openSqlite);
templateStoreSuite('sqlite', openSqlite);
queueSuite('sqlite', openSqlite);
lanesSuite('sqlite', openSqlite);
sandboxSuite('sqlite', openSqlite);
limitsSuite('sqlite', openSqlite);
authStoreSuite('sqlite', openSqlite);
processMetricsSuite('sqlite', openSqlite);
