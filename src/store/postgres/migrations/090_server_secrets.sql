-- Secrets the server keeps besides its signing keys, by name: the key of the client-secret
-- digests (src/auth/client-secrets.ts). Stored sealed like the private signing keys when
-- HERALD_KEY_ENCRYPTION_SECRET is set (src/auth/key-crypto.ts), made once by whichever instance
-- needs one first (insert if absent, then read back, so every instance uses the same).
CREATE TABLE server_secrets (
  name TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
