// `npm run bench -- --quick`, the first half of the SQLite scenarios (the rest: bench-smoke-rest.test.ts).
import { describe, it } from 'node:test';
import { SMOKE_PARTS, smokePart } from '../helpers/quick-bench.ts';

describe('npm run bench --quick', () => {
  it(`runs ${SMOKE_PARTS[0]?.join(', ')} end to end and records a result for each`, () => smokePart(0));
});
