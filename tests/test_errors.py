"""arcnb.errors: every message one line, and the one "refusing to overwrite" error."""
from __future__ import annotations

import pytest

from arcnb.errors import (ArcnbError, OutputExistsError, ParameterError, one_line,
                          refuse_overwrite)


def test_one_line_escapes_controls_cuts_and_keeps_the_first_line():
    assert one_line("  a\nb\x1b[2J  ") == "a\\nb\\x1b[2J"
    assert one_line("Traceback\n  File x\nValueError: bad", first_line=True) == "Traceback"
    assert one_line(ValueError("bad value")) == "bad value"
    cut = one_line("x" * 50, 10)
    assert cut == "x" * 7 + "..." and len(cut) == 10


def test_an_arcnb_error_is_one_line_whatever_its_message_holds():
    e = ParameterError("task 'a\nb' \u202eexe")
    assert "\n" not in str(e) and "\u202e" not in str(e)
    assert isinstance(e, ArcnbError) and isinstance(e, ValueError)


def test_refusing_to_overwrite_names_the_path_and_the_flag(tmp_path):
    e = refuse_overwrite(tmp_path / "out", "pass --overwrite", holds="a finished run")
    assert isinstance(e, OutputExistsError) and isinstance(e, ArcnbError)
    assert str(e) == (f"{tmp_path / 'out'} already holds a finished run; refusing to "
                      "overwrite it (pass --overwrite)")
    with pytest.raises(OutputExistsError, match="already exists"):
        raise refuse_overwrite("f.json")
