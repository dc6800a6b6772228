-- +goose Up
-- Reports written by Vigia from its own facts (issue 17): the Markdown and the facts it
-- was written from (the exports draw their charts from them). No language model is
-- involved: ai_generated is false and ai_model null for every report Vigia writes.
CREATE TABLE reports (
    id           uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    type         text NOT NULL CHECK (type IN ('workspace_overview', 'domain', 'dataset', 'incident')),
    persona      text NOT NULL CHECK (persona IN ('executive', 'engineering', 'steward')),
    subject_id   text,
    title        text NOT NULL,
    language     text CHECK (language IN ('pt', 'en', 'es')), -- null: an older report, in pt
    content_md   text NOT NULL,
    facts        jsonb NOT NULL,
    ai_generated boolean NOT NULL DEFAULT false,
    ai_model     text,
    generated_at timestamptz NOT NULL,
    routine_id   text,                        -- the routine's key; null when a person asked
    created_by   text NOT NULL,
    -- The facts include a restricted-access domain's datasets: only the author and
    -- admins read the report.
    restricted   boolean NOT NULL DEFAULT false
);
CREATE INDEX reports_workspace_generated ON reports (workspace_id, generated_at DESC, id DESC);

-- +goose Down
DROP TABLE reports;
