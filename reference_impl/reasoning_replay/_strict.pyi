# The C accelerators of jsontext.parse_strict_statement and of an envelope in any layout
# (_strict.c); absent where it was not built.

def parse(text: str | bytes, max_depth: int = 32, /) -> tuple[str | None, object] | None:
    """``(None, value)`` for a JSON text that passes SPEC E6 steps 1-5, ``(code, None)`` for one
    decided to fail step 1 (``limit_exceeded``) or step 5 (``json_duplicate_member``), and
    ``None`` for any other text, which ``parse_strict`` reads the exhaustive way. ``max_depth``
    (0 to 1000) replaces step 1's depth of 32: a history file's reader (SPEC H1) passes its own."""

def read_envelope(
    text: str | bytes, /
) -> tuple[str, tuple[str, ...], str, tuple[str, ...] | None] | None:
    """The fields (id, summary, encrypted_content, content) of a text that is a resumable envelope
    in any layout (SPEC E1-E4, E6), or ``None`` for any other text; SPEC E4.1's length limit is
    the caller's to check."""
