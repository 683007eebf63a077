"""The index on disk, by role: format (schema, version, manifest), paths (where an index lives),
state (the index an ingest from a folder wrote), folder (the index's folder and its stale temporary
files), stats (per-chunk statistics both sides compute), writer (full builds), update (in place),
reader (the query side, which imports nothing of the writer side) and freshness (the reader's
comparison of the index with its repository now).

Nothing is imported here: a query loads the reader alone."""
