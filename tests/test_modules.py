"""arcnb.modules, the documented import path of the streaming Metric classes: it
re-exports every public name of arcnb.metrics.streaming, the same objects."""
from __future__ import annotations

import inspect


def test_every_streaming_class_is_importable_from_its_documented_path():
    import arcnb.modules as M
    from arcnb.metrics import streaming as S

    assert sorted(M.__all__) == sorted(S.__all__) and M.__all__
    for name in S.__all__:
        assert getattr(M, name) is getattr(S, name), name
    classes = [n for n, obj in vars(S).items() if inspect.isclass(obj)
               and obj.__module__ == S.__name__ and not n.startswith("_")]
    assert set(classes) <= set(M.__all__)  # a new class needs no edit in arcnb.modules
