"""Part III of SPEC.md, the stored-history tooling profile (§10): history files, private writes,
validation, exports, the leak scan, log redaction and debug captures."""
