import type { Channel } from '../../notifications/model.ts';
import type { TemplateContent, TemplateRecord, TemplateStore } from '../port/templates.ts';
import { type TemplateRow as Row, samplesText, templateFromRow as toRecord } from '../rows.ts';
import type { Query, Sql } from './connect.ts';

/** The PostgreSQL template store; same semantics as the SQLite one. Versions are never updated or deleted. */
export function createPostgresTemplates(sql: Sql): TemplateStore {
  const current = (q: Query, tenant: string, key: string) => q<Row[]>`
    SELECT t.tenant, t.key, v.channel, v.version, v.content, v.sample_variables, t.created_at, v.created_at AS updated_at
      FROM templates t JOIN template_versions v
        ON v.tenant = t.tenant AND v.key = t.key AND v.version = t.current_version
     WHERE t.tenant = ${tenant} AND t.key = ${key}`;

  const save = (
    mode: 'create' | 'update',
    tenant: string,
    key: string,
    channel: Channel,
    content: TemplateContent,
    now: number,
    samples: Record<string, unknown> | null,
  ) =>
    sql.begin(async (tx) => {
      // SQLite serialises writers; here two instances saving one key at once would pick the same
      // next version, so each key's saves take turns on a transaction-scoped advisory lock.
      await tx`SELECT pg_advisory_xact_lock(hashtext(${tenant}), hashtext(${key}))`;
      const [head] = await tx`SELECT 1 FROM templates WHERE tenant = ${tenant} AND key = ${key}`;
      if ((head !== undefined) !== (mode === 'update')) return null;
      const [next] = await tx<{ v: number }[]>`
        SELECT COALESCE(MAX(version), 0) + 1 AS v FROM template_versions WHERE tenant = ${tenant} AND key = ${key}`;
      const v = next?.v ?? 1;
      await tx`INSERT INTO template_versions (tenant, key, version, channel, content, sample_variables, created_at)
               VALUES (${tenant}, ${key}, ${v}, ${channel}, ${JSON.stringify(content)}, ${samplesText(samples)}, ${now})`;
      if (mode === 'create') {
        await tx`INSERT INTO templates (tenant, key, channel, current_version, created_at, updated_at)
                 VALUES (${tenant}, ${key}, ${channel}, ${v}, ${now}, ${now})`;
      } else {
        await tx`UPDATE templates SET channel = ${channel}, current_version = ${v}, updated_at = ${now}
                  WHERE tenant = ${tenant} AND key = ${key}`;
      }
      return toRecord((await current(tx, tenant, key))[0]);
    });

  return {
    create: (tenant, key, channel, content, now, samples = null) =>
      save('create', tenant, key, channel, content, now, samples),
    update: (tenant, key, channel, content, now, samples = null) =>
      save('update', tenant, key, channel, content, now, samples),
    async get(tenant, key) {
      return toRecord((await current(sql, tenant, key))[0]);
    },
    async getVersion(tenant, key, v) {
      const [row] = await sql<Row[]>`
        SELECT tenant, key, channel, version, content, sample_variables, created_at, created_at AS updated_at
          FROM template_versions WHERE tenant = ${tenant} AND key = ${key} AND version = ${v}`;
      return toRecord(row);
    },
    async list(tenant, limit, afterKey = '') {
      const rows = await sql<Row[]>`
        SELECT t.tenant, t.key, v.channel, v.version, v.content, v.sample_variables, t.created_at, v.created_at AS updated_at
          FROM templates t JOIN template_versions v
            ON v.tenant = t.tenant AND v.key = t.key AND v.version = t.current_version
         WHERE t.tenant = ${tenant} AND t.key > ${afterKey} ORDER BY t.key LIMIT ${limit}`;
      return rows.map((row) => toRecord(row) as TemplateRecord);
    },
    async delete(tenant, key) {
      return (await sql`DELETE FROM templates WHERE tenant = ${tenant} AND key = ${key}`).count > 0;
    },
  };
}
