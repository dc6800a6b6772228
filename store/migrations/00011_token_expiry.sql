-- +goose Up
-- An API token may be created with an end of validity: past it, it authenticates nothing
-- (401 token_invalid, as a revoked one), and the weekly digest counts the tokens that
-- expire in the coming week.
ALTER TABLE api_tokens ADD COLUMN expires_at timestamptz;
CREATE INDEX api_tokens_expiring ON api_tokens (workspace_id, expires_at) WHERE revoked_at IS NULL AND expires_at IS NOT NULL;

-- +goose Down
DROP INDEX api_tokens_expiring;
ALTER TABLE api_tokens DROP COLUMN expires_at;
