# The C accelerator of jsontext.parse_strict_statement (_strict.c); absent where it was not built.

def parse(text: str | bytes, /) -> tuple[str | None, object] | None:
    """``(None, value)`` for a JSON text that passes SPEC E6 steps 1-5, ``(code, None)`` for one
    decided to fail step 1 (``limit_exceeded``) or step 5 (``json_duplicate_member``), and
    ``None`` for any other text, which ``parse_strict`` reads the exhaustive way."""
