-- PostgreSQL twin of sqlite/migrations/400_template_category.sql (read its comments).
ALTER TABLE template_versions ADD COLUMN category TEXT;
