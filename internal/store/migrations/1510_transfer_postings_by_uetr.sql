-- A transfer's postings name it by its UETR, the id its participants know
-- (their balance transactions show it as the source); postings made before
-- named the internal row id.
UPDATE ledger_transactions
SET reference = (SELECT t.uetr FROM transfers t WHERE t.id = ledger_transactions.reference)
WHERE kind IN ('transfer_settlement', 'transfer_accept', 'transfer_release', 'transfer_return')
  AND reference IN (SELECT id FROM transfers);
