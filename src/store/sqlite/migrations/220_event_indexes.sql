-- PostgreSQL twin: its migration 220 drops the index of notification_events' primary key. Here
-- the id is the rowid (INTEGER PRIMARY KEY), which costs no index of its own: nothing to do.
SELECT 1;
