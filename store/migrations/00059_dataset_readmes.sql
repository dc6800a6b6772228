-- +goose Up
-- Dataset READMEs (package readme): the draft a session edited (absent: the draft is
-- written from facts on each read) and the published text. Nothing here is AI-generated.
CREATE TABLE dataset_readmes (
    dataset_id   uuid PRIMARY KEY REFERENCES datasets(id) ON DELETE CASCADE,
    draft_md     text,
    edited_by    text,
    edited_at    timestamptz,
    published_md text,
    published_by text,
    published_at timestamptz
);

-- +goose Down
DROP TABLE dataset_readmes;
