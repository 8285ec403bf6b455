-- Reconciliation asks the live card gateway about every live terminal
-- payment still authorizing (its authorisation's answer was lost), oldest
-- first, every reconciliation interval. This partial index holds exactly
-- those rows, so the scan reads them and no others.
CREATE INDEX terminal_payments_authorizing ON terminal_payments (updated_at)
    WHERE livemode = TRUE AND status = 'authorizing';
