-- Revenue is net of refunds and of lost disputes (chargebacks): the amount of a charge's disputes
-- that closed lost, read from Stripe with the charge. A dispute still open or won takes nothing.
ALTER TABLE {db}.{local:payments} {on_cluster} ADD COLUMN IF NOT EXISTS disputed_cents Int64 DEFAULT 0 AFTER refunded_cents;
