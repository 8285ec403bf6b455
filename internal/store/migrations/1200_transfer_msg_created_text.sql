-- The original pacs.008's CreDtTm exactly as received, so that every pacs.002
-- about the transfer echoes it unchanged (OrgnlCreDtTm).
ALTER TABLE transfers ADD COLUMN msg_created_at_text TEXT;
