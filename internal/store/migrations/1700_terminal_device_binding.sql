-- Card-present replay protection holds across the whole system, not per
-- terminal: a device (the initial key id of its DUKPT key, the KSN's key-set
-- and device parts) is bound to at most one terminal that is not
-- deregistered, and every KSN is accepted once, whichever terminal, merchant
-- or mode submits it. Before this, a terminal adopted whatever device it first
-- saw and a read captured from one terminal could be replayed on another.

CREATE UNIQUE INDEX terminals_device ON terminals (ksn_key_id) WHERE ksn_key_id IS NOT NULL AND status <> 'deregistered';
CREATE UNIQUE INDEX terminal_payments_ksn ON terminal_payments (ksn);
