"""Hostile checkpoints: nothing from an untrusted torch.export or TorchScript archive runs.

Every hostile file is built here, from the real formats written by
``torch.export.save`` and ``torch.jit.save``, then edited the way an attacker would.
Each payload writes a marker file when it runs. For each payload that is *live* (it
does run when the file is loaded in full with ``trust_checkpoint=True``), a test shows
it, so these tests cannot pass because the hostile file is simply broken.
"""
from __future__ import annotations

import io
import json
import os
import pickle
import re
import zipfile
from pathlib import Path

import pytest
import torch

from arcnb.errors import ArcnbError
from arcnb.models import UnsafeCheckpointError, detect_format, load_model
from arcnb.models.baseline import CopyInput

from _cli import cli, one_line_refusal

ROOT = Path(__file__).resolve().parents[1]
X2 = torch.full((2, 30, 30), 10, dtype=torch.int64)


# ------------------------------------------------------------------ helpers
class _Writes:
    """Unpickling this runs ``touch MARKER`` (os.system)."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _torch_pickle(marker: Path) -> bytes:
    buf = io.BytesIO()
    torch.save(_Writes(marker), buf)
    return buf.getvalue()


def _edit_zip(src: Path, dst: Path, edit) -> Path:
    """Copy the archive ``src`` to ``dst`` with ``edit(files, prefix)`` applied to its
    members (a dict name -> bytes, names without the archive's top folder)."""
    with zipfile.ZipFile(src) as z:
        names = z.namelist()
        prefix = names[0].split("/")[0] + "/"
        files = {n[len(prefix):]: z.read(n) for n in names}
    edit(files)
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as z:
        for name, data in files.items():
            z.writestr(prefix + name, data)
    return dst


class _Lin(torch.nn.Module):
    """A small exportable model with weights, a tensor constant and a dynamic batch."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(30, 30)
        self.c = torch.tensor([1.0, 2.0])  # a plain attribute: a lifted tensor constant

    def forward(self, x):
        y = self.lin(x.float()) * self.c.sum()
        return y.unsqueeze(1).expand(-1, 11, -1, -1)


def _export(tmp_path: Path, name: str = "base.pt2") -> Path:
    ep = torch.export.export(_Lin(), (X2,),
                             dynamic_shapes=({0: torch.export.Dim("batch", max=1024)},))
    path = tmp_path / name
    torch.export.save(ep, path)
    return path


def _json_edit(files, name, fn):
    obj = json.loads(files[name])
    fn(obj)
    files[name] = json.dumps(obj).encode()


def _pt2_payloads(marker: Path) -> dict:
    """name -> edit function; each plants a payload the way torch's format holds it."""
    evil = _torch_pickle(marker)

    def pickled_weight(f):  # a weight torch marks use_pickle: torch.load(weights_only=False)
        cfg = "data/weights/model_weights_config.json"
        _json_edit(f, cfg, lambda c: c["config"]["lin.weight"].update(use_pickle=True))
        f["data/weights/" + json.loads(f[cfg])["config"]["lin.weight"]["path_name"]] = evil

    def pickled_constant(f):  # the same for a tensor constant
        cfg = "data/constants/model_constants_config.json"
        _json_edit(f, cfg, lambda c: c["config"]["c"].update(use_pickle=True))
        f["data/constants/" + json.loads(f[cfg])["config"]["c"]["path_name"]] = evil

    def sample_inputs(f):  # torch falls back to weights_only=False for these
        f["data/sample_inputs/model.pt"] = evil

    def opaque_object(f):  # constants named opaque_obj_* go to pickle.loads
        cfg = "data/constants/model_constants_config.json"
        _json_edit(f, cfg, lambda c: c["config"]["c"].update(
            path_name="opaque_obj_0", use_pickle=True, tensor_meta=None))
        f["data/constants/opaque_obj_0"] = pickle.dumps(_Writes(marker))

    def legacy_weights(f):  # the legacy weights file: torch.load fallback again
        f["data/weights/model.pt"] = evil

    def guards_code(f):  # Python source the unlifted module compiles and runs
        _json_edit(f, "models/model.json", lambda m: m.__setitem__(
            "guards_code", [f"__import__('os').system('touch {marker}') == 0"]))

    def shape_expression(f):  # shape expressions go through sympy.sympify (eval)
        text = f["models/model.json"].decode()
        text, n = re.subn(r"(Symbol\('s\d+', positive=True, integer=True\))",
                          rf"\1 + 0*__import__('os').system('touch {marker}')", text, count=1)
        assert n == 1
        f["models/model.json"] = text.encode()

    return {"pickled_weight": pickled_weight, "pickled_constant": pickled_constant,
            "sample_inputs": sample_inputs, "opaque_object": opaque_object,
            "legacy_weights": legacy_weights, "guards_code": guards_code,
            "shape_expression": shape_expression}


def _cli(args):
    return cli(*args)


def _assert_one_line_refusal(r, out: Path, *words):
    one_line_refusal(r.returncode, r.stderr, *words)
    assert not out.exists() or not any(out.iterdir()), sorted(out.iterdir())


@pytest.fixture
def tasks_file(tmp_path):
    p = tmp_path / "tasks.txt"
    p.write_text("00576224\n009d5c81\n")
    return p


# ------------------------------------------------------------------ torch.export
def test_pt2_pickled_weight_runs_nothing_cli(tmp_path, tasks_file):
    """The critical case: a .pt2 whose use_pickle weight runs os.system."""
    marker = tmp_path / "pwned"
    evil = _edit_zip(_export(tmp_path), tmp_path / "evil.pt2",
                     _pt2_payloads(marker)["pickled_weight"])
    assert detect_format(evil) == "export"
    out = tmp_path / "run"
    r = _cli(["evaluate", "--checkpoint", str(evil), "--dataset", "arc-agi-1:evaluation",
              "--tasks", str(tasks_file), "--out", str(out), "--no-progress", "--device", "cpu"])
    _assert_one_line_refusal(r, out, "refusing to load checkpoint", "--trust-checkpoint",
                             "posix.system")
    assert not marker.exists()


@pytest.mark.parametrize("payload", ["pickled_weight", "pickled_constant", "sample_inputs",
                                     "opaque_object", "legacy_weights", "guards_code",
                                     "shape_expression"])
def test_pt2_payloads_refused_and_live_when_trusted(tmp_path, payload):
    marker = tmp_path / "pwned"
    evil = _edit_zip(_export(tmp_path), tmp_path / "evil.pt2", _pt2_payloads(marker)[payload])
    with pytest.raises(UnsafeCheckpointError, match="--trust-checkpoint") as ei:
        load_model(evil)
    assert "\n" not in str(ei.value)
    assert not marker.exists()
    # the payload is live: loading the file in full does run it
    try:
        load_model(evil, trust_checkpoint=True).logits(X2)  # guards run on each call
    except ArcnbError:
        pass  # some payloads also break the program; they ran first
    assert marker.exists(), f"the {payload} payload never ran: the test file is not hostile"


def test_pt2_other_refusals(tmp_path):
    base = _export(tmp_path)
    marker = tmp_path / "pwned"

    def aoti(f):  # AOTInductor members are native code (a shared library is loaded)
        f["data/aotinductor/model/model.so"] = b"\x7fELF"

    def operator(f):  # an operator outside aten/prims: here one that writes files
        def set_target(m):
            m["graph_module"]["graph"]["nodes"][0]["target"] = "torch.ops.image.write_file.default"
        _json_edit(f, "models/model.json", set_target)

    def from_file(f):
        def set_target(m):
            m["graph_module"]["graph"]["nodes"][0]["target"] = "torch.ops.aten.from_file.default"
        _json_edit(f, "models/model.json", set_target)

    for name, edit, word in [("aoti", aoti, "aotinductor"), ("operator", operator, "image"),
                             ("from_file", from_file, "from_file")]:
        path = _edit_zip(base, tmp_path / f"{name}.pt2", edit)
        with pytest.raises(UnsafeCheckpointError, match=word):
            load_model(path)
    # two members with one name: zip readers disagree on which one counts
    dup = tmp_path / "dup.pt2"
    with zipfile.ZipFile(base) as zin, zipfile.ZipFile(dup, "w") as zout:
        for n in zin.namelist():
            zout.writestr(n, zin.read(n))
        with pytest.warns(UserWarning, match="Duplicate"):
            zout.writestr(zin.namelist()[-1], b"x")
    with pytest.raises(UnsafeCheckpointError, match="twice"):
        load_model(dup)
    assert not marker.exists()


def test_pt2_input_structure_importing_a_module_refused(tmp_path, monkeypatch):
    """The input structure (a pytree spec) may name an enum, whose module
    torch.export.load imports: any installed module's import-time code runs."""
    marker = tmp_path / "pwned"
    (tmp_path / "arcnb_test_evil_module.py").write_text(
        f"import enum, pathlib\npathlib.Path({str(marker)!r}).touch()\n"
        "class Colour(enum.Enum):\n    RED = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    def enum_context(f):
        def edit(m):
            sig = m["graph_module"]["module_call_graph"][0]["signature"]
            spec = json.loads(sig["in_spec"])
            spec[1]["context"] = json.dumps({"__enum__": True, "name": "RED",
                                             "fqn": "arcnb_test_evil_module:Colour"})
            sig["in_spec"] = json.dumps(spec)
        _json_edit(f, "models/model.json", edit)

    evil = _edit_zip(_export(tmp_path), tmp_path / "evil.pt2", enum_context)
    with pytest.raises(UnsafeCheckpointError, match="in_spec"):
        load_model(evil)
    assert not marker.exists()
    try:
        load_model(evil, trust_checkpoint=True)
    except ArcnbError:
        pass
    assert marker.exists()  # live


def test_pt2_honest_archives_still_load_without_trust(tmp_path):
    path = _export(tmp_path)
    m = load_model(path)
    assert m.source["format"] == "torch.export" and not m.reads_demonstrations
    ref = _Lin().eval()
    ref.load_state_dict({k: v for k, v in torch.export.load(path).state_dict.items()})
    torch.testing.assert_close(m.logits(X2[:1]), ref(X2[:1]))


# ------------------------------------------------------------------ TorchScript
class _Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("b", torch.ones(3))

    def forward(self, x):
        return torch.nn.functional.one_hot(x.clamp(0, 10), 11).permute(0, 3, 1, 2).float() \
            + self.b.sum() * 0


class _SavesOnLoad(torch.nn.Module):
    """__setstate__ (run by torch.jit.load) writes a file with torch.save (aten::save)."""

    def __init__(self, marker: str):
        super().__init__()
        self.w = torch.ones(2)
        self.marker = marker

    def forward(self, x):
        return torch.nn.functional.one_hot(x.clamp(0, 10), 11).permute(0, 3, 1, 2).float()

    @torch.jit.export
    def __getstate__(self):
        return (self.w, self.marker, self.training)

    @torch.jit.export
    def __setstate__(self, state: tuple[torch.Tensor, str, bool]):
        self.w = state[0]
        self.marker = state[1]
        self.training = state[2]
        torch.save(self.w, self.marker)


class _ReadsFile(torch.nn.Module):
    """forward maps a file into memory and writes to it (torch.from_file, shared)."""

    def __init__(self, marker: str):
        super().__init__()
        self.marker = marker

    def forward(self, x):
        t = torch.from_file(self.marker, True, 4, dtype=torch.uint8)
        t.fill_(65)
        return torch.nn.functional.one_hot(x.clamp(0, 10), 11).permute(0, 3, 1, 2).float() \
            + t.float().sum() * 0


def _script(module, path: Path) -> Path:
    torch.jit.save(torch.jit.script(module), path)
    return path


@pytest.mark.parametrize("member", ["constants.pkl", "data.pkl"])
def test_torchscript_pickles_never_run_python(tmp_path, tasks_file, member):
    """TorchScript pickles are read by PyTorch's C++ unpickler: a pickle that names
    os.system fails to load, even with --trust-checkpoint, and never runs."""
    marker = tmp_path / "pwned"
    evil = _edit_zip(_script(_Net(), tmp_path / "net.pt"), tmp_path / "evil.pt",
                     lambda f: f.__setitem__(member, pickle.dumps((_Writes(marker),), protocol=2)))
    assert detect_format(evil) == "torchscript"
    for trust in ([], ["--trust-checkpoint"]):
        out = tmp_path / f"run{len(trust)}"
        r = _cli(["evaluate", "--checkpoint", str(evil), "--dataset", "arc-agi-1:evaluation",
                  "--tasks", str(tasks_file), "--out", str(out), "--no-progress",
                  "--device", "cpu", *trust])
        _assert_one_line_refusal(r, out, "cannot read", "TorchScript", "posix.system")
        assert not marker.exists()


def test_torchscript_file_operators_refused(tmp_path):
    marker = tmp_path / "pwned"
    on_load = _script(_SavesOnLoad(str(marker)), tmp_path / "saves.pt")
    marker.unlink(missing_ok=True)
    with pytest.raises(UnsafeCheckpointError, match="save"):
        load_model(on_load)
    assert not marker.exists()
    load_model(on_load, trust_checkpoint=True)  # live: torch.jit.load runs __setstate__
    assert marker.exists()
    marker.unlink()

    reads = _script(_ReadsFile(str(marker)), tmp_path / "reads.pt")
    with pytest.raises(UnsafeCheckpointError, match="from_file"):
        load_model(reads)
    m = load_model(reads, trust_checkpoint=True)
    m.logits(X2)  # live: the forward creates the file
    assert marker.exists()
    marker.unlink()

    # an operator from a namespace outside aten / prim (e.g. torchvision's image I/O)
    def custom_op(f):
        name = next(n for n in f if n.startswith("code/") and n.endswith(".py"))
        f[name] = f[name].replace(b"torch.one_hot(", b"ops.image.write_file(")

    custom = _edit_zip(_script(_Net(), tmp_path / "net.pt"), tmp_path / "custom.pt", custom_op)
    with pytest.raises(UnsafeCheckpointError, match="image"):
        load_model(custom)


def test_torchscript_honest_archives_still_load_without_trust(tmp_path):
    m = load_model(_script(_Net(), tmp_path / "net.pt"))
    assert m.source["format"] == "torchscript"
    torch.testing.assert_close(m.logits(X2), _Net()(X2))
    traced = tmp_path / "copy.pt"
    torch.jit.save(torch.jit.trace(CopyInput(), (X2,)), traced)
    torch.testing.assert_close(load_model(traced).logits(X2), CopyInput()(X2))


# ------------------------------------------------------------------ safetensors
def _safetensors_bytes(header: dict, data: bytes, *, length: int | None = None) -> bytes:
    """A safetensors file written by hand: 8-byte little-endian header length, the JSON
    header, the data (``length`` overrides the declared header length)."""
    text = json.dumps(header).encode()
    n = len(text) if length is None else length
    return n.to_bytes(8, "little") + text + data


def _f32(begin: int, n: int) -> dict:
    return {"dtype": "F32", "shape": [n], "data_offsets": [begin, begin + 4 * n]}


#: name -> (file bytes, words the one-line refusal holds); every header is hostile
#: in one way only
HOSTILE_SAFETENSORS = {
    "huge_header_length": (_safetensors_bytes({"w": _f32(0, 2)}, bytes(8), length=2 ** 62),
                           ["header length", "more than"]),
    "header_past_the_file": (_safetensors_bytes({"w": _f32(0, 2)}, bytes(8), length=10_000),
                             ["header length", "holds only"]),
    "offsets_past_the_end": (_safetensors_bytes({"w": _f32(0, 4)}, bytes(8)),
                             ["'w'", "past the end of the file"]),
    "overlapping_tensors": (_safetensors_bytes({"a": _f32(0, 4), "b": _f32(8, 4)}, bytes(24)),
                            ["'a'", "'b'", "overlap"]),
    "bad_dtype": (_safetensors_bytes({"w": {"dtype": "F128", "shape": [1],
                                            "data_offsets": [0, 16]}}, bytes(16)),
                  ["dtype 'F128'"]),
    "non_json": ((17).to_bytes(8, "little") + b"not a JSON header" + bytes(8),
                 ["header is not JSON"]),
    "not_utf8": ((4).to_bytes(8, "little") + b"{\xff\xfe}", ["not UTF-8"]),
    "a_json_list": (_safetensors_bytes([1, 2], b""), ["not an object"]),  # type: ignore[arg-type]
    "shape_and_bytes_disagree": (_safetensors_bytes({"w": {"dtype": "F32", "shape": [3],
                                                           "data_offsets": [0, 8]}}, bytes(8)),
                                 ["needs 12 bytes", "hold 8"]),
    "negative_dimension": (_safetensors_bytes({"w": {"dtype": "F32", "shape": [-2],
                                                     "data_offsets": [0, 8]}}, bytes(8)),
                           ["shape [-2]"]),
    "too_many_dimensions": (_safetensors_bytes({"w": {"dtype": "U8", "shape": [1] * 40,
                                                      "data_offsets": [0, 1]}}, bytes(1)),
                            ["at most 32"]),
    "bytes_of_no_tensor": (_safetensors_bytes({"w": _f32(0, 1)}, bytes(12)),
                           ["bytes 4 to 12", "no tensor"]),
    "a_name_twice": (b"", ["twice"]),  # built below: json.dumps cannot repeat a key
    "shorter_than_8_bytes": (b"\x05\x00", ["shorter than the 8-byte header length"]),
    "metadata_not_text": (_safetensors_bytes({"__metadata__": {"step": 3}, "w": _f32(0, 1)},
                                             bytes(4)), ["__metadata__"]),
}
_twice = b'{"w":' + json.dumps(_f32(0, 1)).encode() + b',"w":' + json.dumps(_f32(0, 1)).encode() + b"}"
HOSTILE_SAFETENSORS["a_name_twice"] = (len(_twice).to_bytes(8, "little") + _twice + bytes(4),
                                       ["'w' appears more than once", "a tensor named twice"])


@pytest.mark.parametrize("case", sorted(HOSTILE_SAFETENSORS))
def test_hostile_safetensors_headers_are_refused_in_one_line(tmp_path, monkeypatch, case):
    """Each is refused from its header alone: the safetensors library, which reads the
    tensors, is never reached."""
    import safetensors.torch

    def never(*a, **k):
        raise AssertionError("the tensors were read before the header was checked")

    monkeypatch.setattr(safetensors.torch, "load_file", never)
    data, words = HOSTILE_SAFETENSORS[case]
    path = tmp_path / "model.safetensors"
    path.write_bytes(data)
    assert detect_format(path) == "safetensors"
    with pytest.raises(ArcnbError) as ei:
        load_model(path, arch="demo-conv")
    message = str(ei.value)
    assert "\n" not in message and "safetensors file" in message and str(path) in message
    for w in words:
        assert w in message, message


def test_a_hostile_safetensors_header_on_the_command_line(tmp_path, tasks_file):
    path = tmp_path / "huge.safetensors"
    path.write_bytes(HOSTILE_SAFETENSORS["huge_header_length"][0])
    out = tmp_path / "run"
    r = _cli(["evaluate", "--checkpoint", str(path), "--arch", "demo-conv", "--dataset",
              "arc-agi-1:evaluation", "--tasks", str(tasks_file), "--out", str(out),
              "--no-progress", "--device", "cpu"])
    _assert_one_line_refusal(r, out, "cannot read safetensors file", "header length")


def test_honest_safetensors_files_pass_the_header_check(tmp_path):
    """What the library writes (several dtypes, a scalar, an empty tensor, metadata)
    passes, and the header read is the one in the file."""
    from safetensors.torch import save_file

    from arcnb.models.safety import check_safetensors_header

    tensors = {"f": torch.arange(6, dtype=torch.float32).reshape(2, 3),
               "i": torch.tensor([1, 2, 3], dtype=torch.int64),
               "h": torch.ones(5, dtype=torch.bfloat16), "b": torch.tensor([True, False]),
               "s": torch.tensor(7, dtype=torch.int16), "e": torch.zeros((0, 4))}
    path = tmp_path / "ok.safetensors"
    save_file(tensors, path, metadata={"step": "12"})
    raw = path.read_bytes()
    n = int.from_bytes(raw[:8], "little")
    expected = json.loads(raw[8:8 + n])
    header, meta = check_safetensors_header(path)
    assert meta == {"step": "12"} == expected.pop("__metadata__")
    assert header == expected
    assert {k: (v["dtype"], v["shape"]) for k, v in header.items()} == {
        "f": ("F32", [2, 3]), "i": ("I64", [3]), "h": ("BF16", [5]), "b": ("BOOL", [2]),
        "s": ("I16", []), "e": ("F32", [0, 4])}
