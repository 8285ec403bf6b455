-- The cumulative four-eyes rule adds up a principal's refunds and single
-- payouts of the last window at each creation: these indexes keep that sum a
-- range read of the principal's own recent rows.
CREATE INDEX refunds_by_principal ON refunds (merchant_id, livemode, created_by, created_at);
CREATE INDEX payouts_by_principal ON payouts (merchant_id, livemode, created_by, created_at);
