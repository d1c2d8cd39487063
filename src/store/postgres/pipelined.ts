import type { PendingQuery, Row } from 'postgres';
import type { Query, Sql } from './connect.ts';

/**
 * Sends a statement whose answer the transaction's work does not read, without waiting for it:
 * it goes with the next statement that is waited for, or with the COMMIT.
 */
export type Send = (query: PendingQuery<Row[]>) => Promise<void>;

/** The default Send: waits for the statement's answer, as any other statement. */
export const awaitEach: Send = async (query) => {
  await query;
};

/**
 * A transaction on a connection nobody else uses (`max: 1`), pipelined: BEGIN is sent with the
 * first statement instead of before it, the statements given to `send` go without waiting for
 * their answers, and COMMIT goes right after the last of them. postgres.js's `sql.begin` waits
 * for BEGIN's answer before the first statement and for each statement's before the next; here
 * a cycle waits only for the answers its work reads. Each answer reaches the caller through the
 * event loop, so on a busy loop every wait costs more than the database's time.
 *
 * All or nothing as before: every statement is issued before COMMIT (postgres.js sends them in
 * the order they are issued), and once one fails PostgreSQL refuses the rest of the transaction
 * and answers the COMMIT with a rollback. The first failure is what this throws.
 */
export async function pipelinedTransaction<T>(
  sql: Sql,
  work: (tx: Query, send: Send) => Promise<T>,
): Promise<T> {
  let failure: { error: unknown } | undefined;
  const sent: Array<Promise<void>> = [];
  const send: Send = (query) => {
    // A handler at once, so that a failure is no unhandled rejection before COMMIT reads it.
    sent.push(
      query.then(
        () => undefined,
        (error: unknown) => {
          failure ??= { error };
        },
      ),
    );
    return Promise.resolve();
  };
  void send(sql`BEGIN`);
  let result: T;
  try {
    result = await work(sql, send);
  } catch (error) {
    await Promise.all([...sent, sql`ROLLBACK`.catch(() => undefined)]);
    throw failure ? failure.error : error;
  }
  // Once a statement failed, PostgreSQL answers this COMMIT with a rollback, not an error.
  await Promise.all([...sent, sql`COMMIT`]);
  if (failure) throw failure.error;
  return result;
}
