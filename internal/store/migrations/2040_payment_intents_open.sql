-- Reconciliation asks live providers about the live intents still open
-- (processing or requires_action), oldest change first, every 30 s. This
-- partial index holds exactly those intents, so the scan reads them and no
-- others; a test-mode intent never enters it.
CREATE INDEX payment_intents_open ON payment_intents (updated_at)
    WHERE livemode = TRUE AND status IN ('processing', 'requires_action');
