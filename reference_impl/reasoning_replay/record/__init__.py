"""Part I of SPEC.md, the reasoning-replay record (§2–§8): envelope, reader, writer, capture,
provider input, deduplication, redaction and telemetry."""
