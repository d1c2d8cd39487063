import type { Channel } from '../../notifications/model.ts';
import type { TemplateContent, TemplateRecord, TemplateStore, VariantRemoval } from '../port/templates.ts';
import {
  type TemplateRow as Row,
  samplesText,
  templateFromRow as toRecord,
  type VariantRow,
  variantFromRow,
} from '../rows.ts';
import type { Query, Sql } from './connect.ts';

/** The PostgreSQL template store; same semantics as the SQLite one. Versions are never updated or deleted. */
export function createPostgresTemplates(sql: Sql): TemplateStore {
  const current = (q: Query, tenant: string, key: string) => q<Row[]>`
    SELECT t.tenant, t.key, v.channel, v.version, v.content, v.sample_variables, v.category, t.created_at, v.created_at AS updated_at
      FROM templates t JOIN template_versions v
        ON v.tenant = t.tenant AND v.key = t.key AND v.version = t.current_version
     WHERE t.tenant = ${tenant} AND t.key = ${key}`;

  // SQLite serialises writers; here two instances saving one key at once would pick the same
  // next version, so each key's saves take turns on a transaction-scoped advisory lock.
  const lock = (tx: Query, tenant: string, key: string) =>
    tx`SELECT pg_advisory_xact_lock(hashtext(${tenant}), hashtext(${key}))`;
  const nextVersion = async (tx: Query, tenant: string, key: string) => {
    const [next] = await tx<{ v: number }[]>`
      SELECT COALESCE(MAX(version), 0) + 1 AS v FROM template_versions WHERE tenant = ${tenant} AND key = ${key}`;
    return next?.v ?? 1;
  };
  // A new version carries the previous one's variants, but for the locale set or removed.
  const carryVariants = (
    tx: Query,
    tenant: string,
    key: string,
    from: number,
    to: number,
    but: string | null,
  ) =>
    tx`INSERT INTO template_locales (tenant, key, version, locale, content, updated_at)
       SELECT tenant, key, ${to}, locale, content, updated_at FROM template_locales
        WHERE tenant = ${tenant} AND key = ${key} AND version = ${from} AND locale IS DISTINCT FROM ${but}::text`;

  const save = (
    mode: 'create' | 'update',
    tenant: string,
    key: string,
    channel: Channel,
    content: TemplateContent,
    now: number,
    samples: Record<string, unknown> | null,
    category: string | null,
  ) =>
    sql.begin(async (tx) => {
      await lock(tx, tenant, key);
      const [head] = await tx<{ current_version: number }[]>`
        SELECT current_version FROM templates WHERE tenant = ${tenant} AND key = ${key}`;
      if ((head !== undefined) !== (mode === 'update')) return null;
      const v = await nextVersion(tx, tenant, key);
      await tx`INSERT INTO template_versions (tenant, key, version, channel, content, sample_variables, category, created_at)
               VALUES (${tenant}, ${key}, ${v}, ${channel}, ${JSON.stringify(content)}, ${samplesText(samples)}, ${category}, ${now})`;
      if (head === undefined) {
        await tx`INSERT INTO templates (tenant, key, channel, current_version, created_at, updated_at)
                 VALUES (${tenant}, ${key}, ${channel}, ${v}, ${now}, ${now})`;
      } else {
        await tx`UPDATE templates SET channel = ${channel}, current_version = ${v}, updated_at = ${now}
                  WHERE tenant = ${tenant} AND key = ${key}`;
        await carryVariants(tx, tenant, key, head.current_version, v, null);
      }
      return toRecord((await current(tx, tenant, key))[0]);
    });

  /** A new version of the current content with `locale`'s variant set to `content`, or removed (null). */
  const saveVariant = (
    tenant: string,
    key: string,
    locale: string,
    content: TemplateContent | null,
    now: number,
  ): Promise<VariantRemoval> =>
    sql.begin(async (tx) => {
      await lock(tx, tenant, key);
      const [was] = await current(tx, tenant, key);
      if (!was) return 'no-template' as const;
      if (content === null) {
        const [has] = await tx`SELECT 1 FROM template_locales
          WHERE tenant = ${tenant} AND key = ${key} AND version = ${was.version} AND locale = ${locale}`;
        if (!has) return 'no-variant' as const;
      }
      const v = await nextVersion(tx, tenant, key);
      await tx`INSERT INTO template_versions (tenant, key, version, channel, content, sample_variables, category, created_at)
               VALUES (${tenant}, ${key}, ${v}, ${was.channel}, ${was.content}, ${was.sample_variables}, ${was.category}, ${now})`;
      await tx`UPDATE templates SET current_version = ${v}, updated_at = ${now}
                WHERE tenant = ${tenant} AND key = ${key}`;
      await carryVariants(tx, tenant, key, was.version, v, locale);
      if (content !== null) {
        await tx`INSERT INTO template_locales (tenant, key, version, locale, content, updated_at)
                 VALUES (${tenant}, ${key}, ${v}, ${locale}, ${JSON.stringify(content)}, ${now})`;
      }
      return toRecord((await current(tx, tenant, key))[0]) as TemplateRecord;
    });

  return {
    create: (tenant, key, channel, content, now, samples = null, category = null) =>
      save('create', tenant, key, channel, content, now, samples, category),
    update: (tenant, key, channel, content, now, samples = null, category = null) =>
      save('update', tenant, key, channel, content, now, samples, category),
    async get(tenant, key) {
      return toRecord((await current(sql, tenant, key))[0]);
    },
    async getVersion(tenant, key, v) {
      const [row] = await sql<Row[]>`
        SELECT tenant, key, channel, version, content, sample_variables, category, created_at, created_at AS updated_at
          FROM template_versions WHERE tenant = ${tenant} AND key = ${key} AND version = ${v}`;
      return toRecord(row);
    },
    async list(tenant, limit, afterKey = '') {
      const rows = await sql<Row[]>`
        SELECT t.tenant, t.key, v.channel, v.version, v.content, v.sample_variables, v.category, t.created_at, v.created_at AS updated_at
          FROM templates t JOIN template_versions v
            ON v.tenant = t.tenant AND v.key = t.key AND v.version = t.current_version
         WHERE t.tenant = ${tenant} AND t.key > ${afterKey} ORDER BY t.key LIMIT ${limit}`;
      return rows.map((row) => toRecord(row) as TemplateRecord);
    },
    async delete(tenant, key) {
      return (await sql`DELETE FROM templates WHERE tenant = ${tenant} AND key = ${key}`).count > 0;
    },
    async putVariant(tenant, key, locale, content, now) {
      const saved = await saveVariant(tenant, key, locale, content, now);
      return typeof saved === 'string' ? null : saved;
    },
    removeVariant: (tenant, key, locale, now) => saveVariant(tenant, key, locale, null, now),
    async variants(tenant, versions) {
      if (versions.length === 0) return [];
      const rows = await sql<VariantRow[]>`
        SELECT l.key, l.version, l.locale, l.content, l.updated_at
          FROM template_locales l
          JOIN json_to_recordset(${JSON.stringify(versions.map(({ key, version }) => ({ key, version })))}::text::json) AS w(key text, version int)
            ON l.key = w.key AND l.version = w.version
         WHERE l.tenant = ${tenant}
         ORDER BY l.key, l.version, l.locale`;
      return rows.map(variantFromRow);
    },
  };
}
