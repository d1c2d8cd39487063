// Runs every store behaviour suite against the embedded SQLite adapter. Each area appends one line.
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { tempDir } from '../helpers/config.ts';
import { reportsSuite } from './reports.suite.ts';

const openSqlite = async () => createSqliteStore(tempDir());

reportsSuite('sqlite', openSqlite);
