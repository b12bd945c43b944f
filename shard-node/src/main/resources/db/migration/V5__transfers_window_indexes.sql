-- lastunit shard schema, version 5: with every ListLevels snapshot the cross-shard check reads
-- the transfer records created or completed in the last few seconds (created_at or done_at
-- >= now() - window); without these indexes that read would scan every record the shard ever
-- wrote.
CREATE INDEX transfers_created ON transfers (created_at);
CREATE INDEX transfers_done ON transfers (done_at) WHERE done_at IS NOT NULL;
