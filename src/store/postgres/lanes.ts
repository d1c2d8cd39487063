import { laneRules } from '../lanes.ts';

/** Tenant lines in PostgreSQL's dialect (src/store/lanes.ts). */
export const { joinRank, frontRank, joins, promote } = laneRules('LEAST');

export { readyIndexed } from '../lanes.ts';
