"""The index on disk, by role: format (schema, version, manifest), paths (where an index lives),
stats (per-chunk statistics both sides compute), writer (full builds), update (in place) and
reader (the query side, which imports nothing of the writer side).

Nothing is imported here: a query loads the reader alone."""
