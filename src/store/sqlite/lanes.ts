import { laneRules } from '../lanes.ts';

/** Tenant lines in SQLite's dialect (src/store/lanes.ts). */
export const { joinRank, frontRank, joins, promote } = laneRules('MIN');

export { readyIndexed } from '../lanes.ts';
