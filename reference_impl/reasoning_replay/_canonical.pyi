# The C accelerator of record._fast.canonical.read_canonical (_canonical.c); absent if not built.

def read_canonical(
    text: str | bytes, /
) -> tuple[str, tuple[str, ...], str, tuple[str, ...] | None] | None:
    """The fields (id, summary, encrypted_content, content) of an envelope text laid out as SPEC C3
    writes it, or ``None`` for any other text. Bytes must also be valid UTF-8."""
