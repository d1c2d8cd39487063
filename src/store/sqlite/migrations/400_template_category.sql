-- A template version's default category (docs/preferences.md): a notification naming the template
-- without a category of its own takes the category of the version it pins at acceptance. Kept per
-- version, like the content: a notification pinned to an old version keeps that version's.
ALTER TABLE template_versions ADD COLUMN category TEXT;
