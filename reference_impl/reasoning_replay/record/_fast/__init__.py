"""The reader's accelerated paths (SPEC E6): each gives a text the verdict of :mod:`..read`.

:mod:`.canonical` reads a canonically written envelope (SPEC C3); :mod:`.general` reads every
other text, with msgspec and the C parser :mod:`reasoning_replay._strict`.
"""
