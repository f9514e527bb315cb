-- Which account a connection reads, shown on GET /integrations: the Search Console property, or the
-- Stripe key's mode, kind and last four characters ("live secret key ...4242"). Never a secret.
ALTER TABLE {db}.integrations {on_cluster} ADD COLUMN IF NOT EXISTS account String DEFAULT '' AFTER provider;
