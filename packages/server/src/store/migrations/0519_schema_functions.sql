-- The store's functions have one current text each, in store/functions/<name>.sql (CREATE OR REPLACE),
-- applied after the migrations, under the same lock, whenever that text changed (store/migrate.ts): a
-- migration changes the schema and no longer carries a copy of a function. One row per file: the SHA-256
-- of the text last applied, and the newest migration the code that applied it knew (an instance of an
-- older version, started during a rolling deploy, leaves a newer text in place). A migration that drops
-- a function deletes its row here too.
CREATE TABLE schema_functions (
  name text PRIMARY KEY,
  sha256 text NOT NULL,
  migration text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);
