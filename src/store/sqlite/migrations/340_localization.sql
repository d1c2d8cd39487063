-- Localization (docs/localization.md, docs/localization.md). A notification's own locale (a canonical
-- BCP 47 tag, or NULL), and the locale its SENT event rendered in (NULL: the template itself).
ALTER TABLE notifications ADD COLUMN locale TEXT;
ALTER TABLE notification_events ADD COLUMN locale TEXT;

-- Each template version's locale variants, immutable like the version: a new version copies the
-- current one's variants, and saving or removing a variant saves a new version, so a
-- notification pinned to a version renders that version's variants
-- (docs/decisions/0020-locale-variants-per-version.md).
CREATE TABLE template_locales (
  tenant TEXT NOT NULL,
  key TEXT NOT NULL,
  version INTEGER NOT NULL,
  locale TEXT NOT NULL,
  content TEXT NOT NULL,              -- JSON { subject?, text?, html?, title?, body? }
  updated_at INTEGER NOT NULL,        -- when this variant's content was saved
  PRIMARY KEY (tenant, key, version, locale)
);
