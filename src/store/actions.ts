import type { ActionEffect } from '../notifications/status.ts';
import type { LaneRules } from './lanes.ts';

const literal = (value: string | null) => (value === null ? 'NULL' : `'${value}'`);

/** How a dialect spells the statement's three parameters. */
export interface ActionParams {
  now: string;
  id: string;
  tenant: string;
}

/**
 * The UPDATE that applies an operator's action (status.ts decides it: CANCEL, REDRIVE), written
 * once for both databases. The state condition sits in the UPDATE's WHERE, so a concurrent claim
 * wins cleanly; no row returned means the notification is not the tenant's or not in a state the
 * action applies to.
 */
export function actionUpdate(effect: ActionEffect, joinRank: LaneRules['joinRank'], p: ActionParams): string {
  return actionUpdateWhere(effect, joinRank, p.now, `id = ${p.id} AND tenant = ${p.tenant}`);
}

/**
 * The same UPDATE for the rows `which` selects (a broadcast's cancel applies CANCEL to a chunk of
 * its notifications): the state condition is added to it.
 */
export function actionUpdateWhere(
  effect: ActionEffect,
  joinRank: LaneRules['joinRank'],
  now: string,
  which: string,
): string {
  const sets = [
    `status = ${literal(effect.status)}`,
    `queue_state = ${literal(effect.queueState)}`,
    'due_at = NULL',
  ];
  if (effect.restart) {
    const rank = joinRank('notifications.tenant', 'notifications.priority', 'notifications.channel');
    sets.push(
      'attempts = 0',
      'holds = 0',
      'next_attempt_at = NULL',
      'lease_owner = NULL',
      'lease_until = NULL',
      `lane_rank = ${rank}`,
    );
  }
  return `UPDATE notifications SET ${sets.join(', ')}, updated_at = ${now}
    WHERE ${which} AND status IN (${effect.from.map(literal).join(', ')})
    RETURNING seq, priority`;
}
