"""The parts of ``tools/payload_report.py``, in the order of its work.

- ``reading``: a corpus of fast-agent histories, each replay block in every form it can take;
- ``forms``: the replay each stored form gets, and a request item's bytes on the wire;
- ``measures``: what is measured per task and form (bytes, duplication, leakage, timing);
- ``report``: the corpus report, every task measured in every form;
- ``markdown`` and ``svg``: the report rendered.
"""
