-- +goose Up
-- Domain membership history (issue 17): which domains a dataset belonged to when, so the
-- chargeback counts a cost in the domains of its time, not today's. Triggers on
-- domain_datasets write it, so every path that changes a membership (creating a domain
-- with its datasets, replacing its members, the bench's seeding) keeps it; a row is open
-- (valid_to null) while the membership lasts. Intervals are half-open: [valid_from, valid_to).
CREATE TABLE domain_dataset_history (
    domain_id  uuid NOT NULL REFERENCES domains(id) ON DELETE CASCADE,
    dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    valid_from timestamptz NOT NULL,
    valid_to   timestamptz,
    CHECK (valid_to IS NULL OR valid_to >= valid_from)
);
CREATE INDEX domain_dataset_history_dataset ON domain_dataset_history (dataset_id, valid_from);
CREATE UNIQUE INDEX domain_dataset_history_open ON domain_dataset_history (domain_id, dataset_id) WHERE valid_to IS NULL;

-- Back-fill: today's memberships, from when their domain was created (a dataset cannot
-- have been in a domain before it existed; when it joined later is not known).
INSERT INTO domain_dataset_history (domain_id, dataset_id, valid_from)
SELECT dd.domain_id, dd.dataset_id, dm.created_at
  FROM domain_datasets dd JOIN domains dm ON dm.id = dd.domain_id;

-- +goose StatementBegin
CREATE FUNCTION vigia_domain_membership_history() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO domain_dataset_history (domain_id, dataset_id, valid_from)
        VALUES (NEW.domain_id, NEW.dataset_id, now())
        ON CONFLICT (domain_id, dataset_id) WHERE valid_to IS NULL DO NOTHING;
        RETURN NEW;
    END IF;
    UPDATE domain_dataset_history SET valid_to = now()
     WHERE domain_id = OLD.domain_id AND dataset_id = OLD.dataset_id AND valid_to IS NULL;
    RETURN OLD;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER domain_datasets_history AFTER INSERT OR DELETE ON domain_datasets
    FOR EACH ROW EXECUTE FUNCTION vigia_domain_membership_history();

-- +goose Down
DROP TRIGGER domain_datasets_history ON domain_datasets;
DROP FUNCTION vigia_domain_membership_history();
DROP TABLE domain_dataset_history;
