import type { BenchOptions } from '../lib/options.ts';
import type { Row } from '../lib/report.ts';

/** One benchmark scenario of the issue; returns its rows (throws Unavailable when a part is missing). */
export interface Scenario {
  name: string;
  title: string;
  run(options: BenchOptions): Promise<Row[]>;
}
