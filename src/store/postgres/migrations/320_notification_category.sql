-- A notification's category (docs/preferences.md): named at acceptance (or a template's default), read
-- when the notification to a person is processed to apply the recipient's preferences. Adding a
-- nullable column rewrites nothing.
ALTER TABLE notifications ADD COLUMN category TEXT;
