-- +goose Up
-- Chargeback (issue 17): what each profile read, and the exchange rates the operator
-- loads (`vigia fx load`) for the workspace currency. No network call fetches rates.
--
-- bytes_read: bytes of the values the profile read, from its own counts (non-null values
-- of each column × the type's storage size, or × the mean length for text); null for the
-- profiles written before this column existed (they count 0).
ALTER TABLE dataset_profiles ADD COLUMN bytes_read bigint;

-- One reference rate per currency and day: units of the currency for one euro (the ECB
-- reference-rate convention). Global to the installation, like the operator who loads it.
CREATE TABLE fx_rates (
    currency  text NOT NULL CHECK (currency IN ('USD', 'GBP', 'CHF', 'BRL')),
    rate_date date NOT NULL,
    per_eur   numeric(18, 8) NOT NULL CHECK (per_eur > 0),
    loaded_at timestamptz NOT NULL,
    PRIMARY KEY (currency, rate_date)
);

-- +goose Down
DROP TABLE fx_rates;
ALTER TABLE dataset_profiles DROP COLUMN bytes_read;
