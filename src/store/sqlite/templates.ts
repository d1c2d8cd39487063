import type { Channel } from '../../notifications/model.ts';
import type { TemplateContent, TemplateRecord, TemplateStore } from '../port/templates.ts';
import {
  type TemplateRow as Row,
  samplesText,
  templateFromRow as toRecord,
  type VariantRow,
  variantFromRow,
} from '../rows.ts';
import type { SqliteDb } from './open.ts';

const CURRENT = `SELECT t.tenant, t.key, v.channel, v.version, v.content, v.sample_variables, v.category, t.created_at, v.created_at AS updated_at
  FROM templates t JOIN template_versions v
    ON v.tenant = t.tenant AND v.key = t.key AND v.version = t.current_version`;

/** The SQLite template store. Versions are never updated or deleted. */
export function createSqliteTemplates(db: SqliteDb): TemplateStore {
  const head = db.prepare('SELECT current_version FROM templates WHERE tenant = ? AND key = ?');
  const nextVersion = db.prepare(
    'SELECT COALESCE(MAX(version), 0) + 1 AS v FROM template_versions WHERE tenant = ? AND key = ?',
  );
  const insertVersion = db.prepare(
    'INSERT INTO template_versions (tenant, key, version, channel, content, sample_variables, category, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const insertHead = db.prepare(
    'INSERT INTO templates (tenant, key, channel, current_version, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const moveHead = db.prepare(
    'UPDATE templates SET channel = ?, current_version = ?, updated_at = ? WHERE tenant = ? AND key = ?',
  );
  const current = db.prepare(`${CURRENT} WHERE t.tenant = ? AND t.key = ?`);
  const version = db.prepare(
    `SELECT v.tenant, v.key, v.channel, v.version, v.content, v.sample_variables, v.category, v.created_at, v.created_at AS updated_at
       FROM template_versions v WHERE v.tenant = ? AND v.key = ? AND v.version = ?`,
  );
  const list = db.prepare(`${CURRENT} WHERE t.tenant = ? AND t.key > ? ORDER BY t.key LIMIT ?`);
  const remove = db.prepare('DELETE FROM templates WHERE tenant = ? AND key = ?');
  // A new version carries the previous one's variants, but for the locale set or removed (`?`).
  const carryVariants = db.prepare(
    `INSERT INTO template_locales (tenant, key, version, locale, content, updated_at)
     SELECT tenant, key, ?, locale, content, updated_at FROM template_locales
      WHERE tenant = ? AND key = ? AND version = ? AND locale IS NOT ?`,
  );
  const insertVariant = db.prepare(
    'INSERT INTO template_locales (tenant, key, version, locale, content, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const hasVariant = db.prepare(
    'SELECT 1 FROM template_locales WHERE tenant = ? AND key = ? AND version = ? AND locale = ?',
  );
  const variantsOf = db.prepare(
    `SELECT key, version, locale, content, updated_at FROM template_locales
      WHERE tenant = ? AND (key, version) IN (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?))
      ORDER BY key, version, locale`,
  );

  const save = db.transaction(
    (
      mode: 'create' | 'update',
      tenant: string,
      key: string,
      channel: Channel,
      content: TemplateContent,
      now: number,
      samples: Record<string, unknown> | null,
      category: string | null,
    ) => {
      const previous = head.get(tenant, key) as { current_version: number } | undefined;
      if ((previous !== undefined) !== (mode === 'update')) return null;
      const v = (nextVersion.get(tenant, key) as { v: number }).v;
      insertVersion.run(
        tenant,
        key,
        v,
        channel,
        JSON.stringify(content),
        samplesText(samples),
        category,
        now,
      );
      if (previous) {
        moveHead.run(channel, v, now, tenant, key);
        carryVariants.run(v, tenant, key, previous.current_version, null);
      } else insertHead.run(tenant, key, channel, v, now, now);
      return toRecord(current.get(tenant, key) as Row);
    },
  );

  /** A new version of the current content with `locale`'s variant set to `content`, or removed (null). */
  const saveVariant = db.transaction(
    (tenant: string, key: string, locale: string, content: TemplateContent | null, now: number) => {
      const was = current.get(tenant, key) as Row | undefined;
      if (!was) return 'no-template' as const;
      if (content === null && !hasVariant.get(tenant, key, was.version, locale)) return 'no-variant' as const;
      const v = (nextVersion.get(tenant, key) as { v: number }).v;
      insertVersion.run(tenant, key, v, was.channel, was.content, was.sample_variables, was.category, now);
      moveHead.run(was.channel, v, now, tenant, key);
      carryVariants.run(v, tenant, key, was.version, locale);
      if (content !== null) insertVariant.run(tenant, key, v, locale, JSON.stringify(content), now);
      return toRecord(current.get(tenant, key) as Row) as TemplateRecord;
    },
  );

  return {
    async create(tenant, key, channel, content, now, samples = null, category = null) {
      return save.immediate('create', tenant, key, channel, content, now, samples, category);
    },
    async update(tenant, key, channel, content, now, samples = null, category = null) {
      return save.immediate('update', tenant, key, channel, content, now, samples, category);
    },
    async get(tenant, key) {
      return toRecord(current.get(tenant, key) as Row | undefined);
    },
    async getVersion(tenant, key, v) {
      return toRecord(version.get(tenant, key, v) as Row | undefined);
    },
    async list(tenant, limit, afterKey = '') {
      return (list.all(tenant, afterKey, limit) as Row[]).map((row) => toRecord(row) as TemplateRecord);
    },
    async delete(tenant, key) {
      return remove.run(tenant, key).changes > 0;
    },
    async putVariant(tenant, key, locale, content, now) {
      const saved = saveVariant.immediate(tenant, key, locale, content, now);
      return typeof saved === 'string' ? null : saved;
    },
    async removeVariant(tenant, key, locale, now) {
      return saveVariant.immediate(tenant, key, locale, null, now);
    },
    async variants(tenant, versions) {
      if (versions.length === 0) return [];
      const pairs = JSON.stringify(versions.map((v) => [v.key, v.version]));
      return (variantsOf.all(tenant, pairs) as VariantRow[]).map(variantFromRow);
    },
  };
}
