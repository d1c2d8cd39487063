-- The suppression key of the address a notification to a person (`recipient: { id }`) was sent to,
-- written with its SENT (docs/sending-to-people.md): the stored recipient is `{ id }`, so a later
-- bounce or complaint report about the message suppresses this address (the contract's section 11).
-- NULL for a notification to an address (its recipient is the address) and before it is sent.
ALTER TABLE notifications ADD COLUMN address_key TEXT;
