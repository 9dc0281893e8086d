"""arcnb.arc3 as a package: its public names (the command line, ``arcnb arc3``, is
tested in ``tests/test_commands_arc3.py``; each module of the package in its own
``tests/test_arc3_<module>.py``)."""
from __future__ import annotations

from arcnb import arc3


def test_the_public_names():
    for name in arc3.__all__:
        assert getattr(arc3, name) is not None
    assert arc3.DEFAULT_RULE == "0.9.9" and set(arc3.RULES) == {"0.9.9", "0.9.6", "0.9.1"}
