-- One index per recipient's inbox instead of three (docs/inbox.md). The inbox's writes land in
-- the index at each recipient's place, so each index pays a page a message in every commit: with
-- three (all, unread, unseen), dispatch of inapp to 1,000 recipients spent 23 of its 37 s of
-- dispatch-thread CPU committing (`npm run bench -- --scenario inbox`, BENCH_PROF=1). The marks
-- join the one index, so the filters and the counts read a recipient's entries from it alone.
DROP INDEX inbox_messages_unread;
DROP INDEX inbox_messages_unseen;
DROP INDEX inbox_messages_recipient;
CREATE INDEX inbox_messages_recipient
  ON inbox_messages (tenant, recipient_id, created_at, id, read_at, seen_at, archived_at);
