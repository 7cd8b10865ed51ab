"""Part II of SPEC.md, configuration-update ordering (§9): the request planner, its overrides and
the cache-state record."""
