-- Signing out everywhere (README, "Authentication"): a refresh token whose session began before
-- the user's sessions_valid_after (epoch ms) is refused. Set by POST /auth/logout-all,
-- POST /admin/users/{id}/revoke-sessions, disabling the user and changing the password. User
-- state, not session state: NULL means every session of the user is valid.
ALTER TABLE users ADD COLUMN sessions_valid_after BIGINT;
