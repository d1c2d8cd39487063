-- External identities linked to users (README, "Sign-in with an OpenID provider"): the first
-- sign-in matches an enabled user by a verified email and links the provider's (issuer, subject)
-- to it; later sign-ins match on (issuer, subject) only, so an email changed at the provider
-- cannot move a sign-in to another account. One identity per user and issuer.
CREATE TABLE user_identities (
  issuer TEXT NOT NULL,
  subject TEXT NOT NULL,
  user_id TEXT NOT NULL,
  linked_at BIGINT NOT NULL,
  PRIMARY KEY (issuer, subject)
);
CREATE UNIQUE INDEX user_identities_user ON user_identities (user_id, issuer);
