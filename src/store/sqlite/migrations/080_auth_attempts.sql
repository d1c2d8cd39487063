-- Throttled authentication attempts (src/auth/throttle.ts), for login and /auth/token alike:
-- an attempt is counted before its (slow) check, in the same transaction that reads the counts,
-- and dropped again when it succeeds, so attempts in flight count and a parallel burst cannot
-- get past the limit. `scope` is 'login' or 'token'; `subject` the email or the client id;
-- `address` the client address (an IPv6 one as its /64). Replaces login_failures (010).
CREATE TABLE auth_attempts (
  id INTEGER PRIMARY KEY,
  scope TEXT NOT NULL,
  subject TEXT NOT NULL,
  address TEXT NOT NULL,
  at BIGINT NOT NULL
);
CREATE INDEX auth_attempts_subject ON auth_attempts (scope, subject, at);
CREATE INDEX auth_attempts_address ON auth_attempts (scope, address, at);
CREATE INDEX auth_attempts_at ON auth_attempts (at);
INSERT INTO auth_attempts (scope, subject, address, at) SELECT 'login', email, address, at FROM login_failures;
DROP TABLE login_failures;
