import type { Channel } from '../../notifications/model.ts';
import type { TemplateContent, TemplateRecord, TemplateStore } from '../port/templates.ts';
import { type TemplateRow as Row, samplesText, templateFromRow as toRecord } from '../rows.ts';
import type { SqliteDb } from './open.ts';

const CURRENT = `SELECT t.tenant, t.key, v.channel, v.version, v.content, v.sample_variables, t.created_at, v.created_at AS updated_at
  FROM templates t JOIN template_versions v
    ON v.tenant = t.tenant AND v.key = t.key AND v.version = t.current_version`;

/** The SQLite template store. Versions are never updated or deleted. */
export function createSqliteTemplates(db: SqliteDb): TemplateStore {
  const head = db.prepare('SELECT current_version FROM templates WHERE tenant = ? AND key = ?');
  const nextVersion = db.prepare(
    'SELECT COALESCE(MAX(version), 0) + 1 AS v FROM template_versions WHERE tenant = ? AND key = ?',
  );
  const insertVersion = db.prepare(
    'INSERT INTO template_versions (tenant, key, version, channel, content, sample_variables, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const insertHead = db.prepare(
    'INSERT INTO templates (tenant, key, channel, current_version, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const moveHead = db.prepare(
    'UPDATE templates SET channel = ?, current_version = ?, updated_at = ? WHERE tenant = ? AND key = ?',
  );
  const current = db.prepare(`${CURRENT} WHERE t.tenant = ? AND t.key = ?`);
  const version = db.prepare(
    `SELECT v.tenant, v.key, v.channel, v.version, v.content, v.sample_variables, v.created_at, v.created_at AS updated_at
       FROM template_versions v WHERE v.tenant = ? AND v.key = ? AND v.version = ?`,
  );
  const list = db.prepare(`${CURRENT} WHERE t.tenant = ? AND t.key > ? ORDER BY t.key LIMIT ?`);
  const remove = db.prepare('DELETE FROM templates WHERE tenant = ? AND key = ?');

  const save = db.transaction(
    (
      mode: 'create' | 'update',
      tenant: string,
      key: string,
      channel: Channel,
      content: TemplateContent,
      now: number,
      samples: Record<string, unknown> | null,
    ) => {
      const exists = head.get(tenant, key) !== undefined;
      if (exists !== (mode === 'update')) return null;
      const v = (nextVersion.get(tenant, key) as { v: number }).v;
      insertVersion.run(tenant, key, v, channel, JSON.stringify(content), samplesText(samples), now);
      if (mode === 'create') insertHead.run(tenant, key, channel, v, now, now);
      else moveHead.run(channel, v, now, tenant, key);
      return toRecord(current.get(tenant, key) as Row);
    },
  );

  return {
    async create(tenant, key, channel, content, now, samples = null) {
      return save.immediate('create', tenant, key, channel, content, now, samples);
    },
    async update(tenant, key, channel, content, now, samples = null) {
      return save.immediate('update', tenant, key, channel, content, now, samples);
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
  };
}
