-- A user is a tenant and an email (#46, docs/authentication.md): the same email may be a user of
-- several tenants, each with its own password and role, so one tenant's admin can neither learn
-- nor take another tenant's address. The email's own unique constraint (its default name) gives
-- way to UNIQUE (tenant, email); every row stays as it is, so refresh tokens (sub = the id),
-- sessions_valid_after and the identities linked to ids keep working.
ALTER TABLE users DROP CONSTRAINT users_email_key;
ALTER TABLE users ADD CONSTRAINT users_tenant_email_key UNIQUE (tenant, email);
-- A login without a tenant reads every tenant's user of the email, oldest first.
CREATE INDEX users_email ON users (email, created_at);
