-- Each template version's sample variables (JSON object, or NULL for none): what the editor's
-- preview renders it with, saved with the version (src/templates/routes.ts).
ALTER TABLE template_versions ADD COLUMN sample_variables TEXT;
