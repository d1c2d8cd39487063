// `npm run bench -- --quick`, the second half of the SQLite scenarios (the first: bench-smoke.test.ts).
import { describe, it } from 'node:test';
import { SMOKE_PARTS, smokePart } from '../helpers/quick-bench.ts';

describe('npm run bench --quick, the rest', () => {
  it(`runs ${SMOKE_PARTS[1]?.join(', ')} end to end and records a result for each`, () => smokePart(1));
});
