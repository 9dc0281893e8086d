"""Sphinx extension for arcnb's API reference.

* ``.. arcnb-module:: arcnb.scoring`` writes a module's API page from its ``__all__``:
  the module docstring, a summary table, then every public name. A name is described in
  full (autodoc) on the page of its *home*, the public module it is defined in (for a
  name defined in a private submodule such as ``arcnb/metrics/grid.py``, the public
  package ``arcnb.metrics``); another public module that re-exports it gets a short
  entry pointing there. Constants show their value and their ``#:`` doc comment.
* The undocumented-name check (``env-check-consistency``): every module of
  :data:`PUBLIC_MODULES` must have an API page; every public name (``__all__``, or the
  public classes and functions of a module without one) must be described there; a
  class or function must have a docstring, a constant a ``#:`` doc comment, and each
  public method or property of a public arcnb class a docstring (one inherited from a
  base class counts). Each failure is a warning, so a ``-W`` build fails. A top-level
  module of ``arcnb`` that is neither public nor listed in :data:`NOT_IN_API` fails too.
* References to other libraries (numpy, pandas, torch, the standard library) cannot be
  resolved offline (no intersphinx inventory is fetched); they are shown as plain code.
  A reference to anything else, in particular to ``arcnb``, must resolve.
"""
from __future__ import annotations

import ast
import builtins
import importlib
import importlib.util
import inspect
import pkgutil
import re
import sys
from functools import lru_cache
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.pycode import ModuleAnalyzer
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.inspect import object_description

logger = logging.getLogger(__name__)

#: The public modules, in the order of the API reference.
PUBLIC_MODULES = [
    "arcnb", "arcnb.data", "arcnb.predictions", "arcnb.scoring", "arcnb.metrics",
    "arcnb.columns", "arcnb.modules", "arcnb.lightning", "arcnb.plot", "arcnb.plot.figures",
    "arcnb.breakdown", "arcnb.taxonomy", "arcnb.stats", "arcnb.compare", "arcnb.evaluate",
    "arcnb.runs", "arcnb.report", "arcnb.explorer", "arcnb.models", "arcnb.overlap",
    "arcnb.augment", "arcnb.baselines", "arcnb.resources", "arcnb.grids", "arcnb.io",
    "arcnb.errors", "arcnb.candidates", "arcnb.front", "arcnb.journal", "arcnb.probes",
]
PUBLIC_MODULES.append("arcnb.sweep")  # checkpoint sweeps
PUBLIC_MODULES += ["arcnb.html", "arcnb.report.sections"]  # HTML in one home; report sections
PUBLIC_MODULES += ["arcnb.arc3", "arcnb.plot.arc3"]  # ARC-AGI-3 recordings
PUBLIC_MODULES.append("arcnb.text")  # the one text escaper
PUBLIC_MODULES.append("arcnb.repeats")  # many runs
PUBLIC_MODULES.append("arcnb.harness_logs")  # the harness's raw API logs
PUBLIC_MODULES.append("arcnb.options")  # the evaluation options, defined once
PUBLIC_MODULES.append("arcnb.difficulty")  # task difficulty across systems
PUBLIC_MODULES.append("arcnb.voting")  # majority voting, the one rule

#: Top-level modules of arcnb that are not in the API reference, and why.
NOT_IN_API = {
    "arcnb.cli": "the command line, documented in the user guide",
    "arcnb.commands": "the command line's subcommands, documented in the user guide",
    "arcnb.__main__": "python -m arcnb",
    "arcnb.callable_module": "the machinery of a package you call (arcnb.candidates, "
                             "arcnb.repeats), documented on those packages' pages",
}

#: Public names that a module provides without listing them in ``__all__``.
EXTRA_NAMES = {
    # imported on first use, so that `import arcnb` stays light (not in __all__, so
    # that `from arcnb import *` does not import ipywidgets)
    "arcnb": ["explore"],
}

#: Constants whose value is longer than this are described without it.
MAX_VALUE_CHARS = 72

#: Aliases used in annotations for other libraries.
_ALIASES = {"np": "numpy", "pd": "pandas", "nn": "torch", "F": "torch", "L": "lightning",
            "pa": "pyarrow", "pq": "pyarrow", "plt": "matplotlib", "mpl": "matplotlib"}


# ================================================================ what is public
@lru_cache(maxsize=None)
def public_names(modname: str) -> tuple[str, ...]:
    """``__all__`` (plus :data:`EXTRA_NAMES`), or the public classes and functions
    defined in a module without ``__all__``."""
    mod = importlib.import_module(modname)
    names = getattr(mod, "__all__", None)
    if names is None:
        names = [n for n, o in vars(mod).items()
                 if not n.startswith("_") and (inspect.isclass(o) or inspect.isfunction(o))
                 and getattr(o, "__module__", None) == modname]
    return tuple(names) + tuple(EXTRA_NAMES.get(modname, ()))


def kind_of(obj) -> str:
    """``exception``, ``class``, ``function`` or ``data``."""
    if inspect.isclass(obj):
        return "exception" if issubclass(obj, BaseException) else "class"
    if inspect.isroutine(obj):
        return "function"
    return "data"


@lru_cache(maxsize=None)
def _submodules(modname: str) -> tuple[str, ...]:
    mod = importlib.import_module(modname)
    if not hasattr(mod, "__path__"):
        return ()
    return tuple(m.name for m in pkgutil.walk_packages(mod.__path__, modname + ".")
                 if m.name not in NOT_IN_API)


@lru_cache(maxsize=None)
def all_arcnb_modules() -> tuple[str, ...]:
    return ("arcnb",) + _submodules("arcnb")


@lru_cache(maxsize=None)
def _assigned_names(modname: str) -> frozenset:
    """Names bound by a top-level assignment in a module's source."""
    spec = importlib.util.find_spec(modname)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return frozenset()
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        for t in targets:
            for sub in ast.walk(t):
                if isinstance(sub, ast.Name):
                    names.add(sub.id)
    return frozenset(names)


@lru_cache(maxsize=None)
def _attr_docs(modname: str) -> dict:
    try:
        analyzer = ModuleAnalyzer.for_module(modname)
        return {name: "\n".join(lines).strip()
                for (scope, name), lines in analyzer.find_attr_docs().items() if scope == ""}
    except Exception:  # noqa: BLE001 - a module without source has no doc comments
        return {}


def defining_module(modname: str, name: str, obj) -> str:
    """The module whose source defines ``obj`` (a class or function: its
    ``__module__``; a constant: the module that assigns it)."""
    if kind_of(obj) != "data":
        return getattr(obj, "__module__", None) or modname
    for m in (modname,) + _submodules(modname) + all_arcnb_modules():
        if name in _assigned_names(m) and getattr(importlib.import_module(m), name,
                                                  None) is obj:
            return m
    return modname


@lru_cache(maxsize=None)
def home_of(modname: str, name: str) -> str:
    """The public module whose page describes ``modname.name`` in full."""
    obj = getattr(importlib.import_module(modname), name)
    defmod = defining_module(modname, name, obj)
    best = None
    for p in PUBLIC_MODULES:
        if (defmod == p or defmod.startswith(p + ".")) and name in public_names(p) \
                and getattr(importlib.import_module(p), name, None) is obj:
            if best is None or len(p) > len(best):
                best = p
    return best or modname


def data_doc(modname: str, name: str) -> str:
    """The ``#:`` doc comment (or docstring after the assignment) of a constant."""
    obj = getattr(importlib.import_module(modname), name)
    defmod = defining_module(modname, name, obj)
    for m in (defmod, modname):
        doc = _attr_docs(m).get(name)
        if doc:
            return doc
    return ""


def _value_text(obj) -> str | None:
    try:
        text = object_description(obj)
    except Exception:  # noqa: BLE001
        return None
    text = " ".join(text.split())
    return text if len(text) <= MAX_VALUE_CHARS else None


# ================================================================ the page
_ROLE = re.compile(r":(?:[a-z]+:)?[a-z]+:`(?:([^`<]*?)\s*<[^`>]*>|~?([^`]*))`")


def _role_to_code(m: re.Match) -> str:
    title, target = m.group(1), m.group(2)
    if title:
        text = title
    elif target.startswith("~"):
        text = target[1:].split(".")[-1]
    else:
        text = target
    return f"``{text}``"


def _sentence_end(text: str, marks: str) -> int:
    """Where the first sentence of ``text`` ends (at one of ``marks`` followed by a
    space, outside a literal)."""
    for m in re.finditer(f"[{re.escape(marks)}](\\s|$)", text):
        if text[:m.start()].count("``") % 2:
            continue  # inside a literal
        if m.group(0)[0] == "." and re.search(r"\b(e\.g|i\.e|al|vs|cf)$", text[:m.start()]):
            continue  # an abbreviation
        return m.start() + 1
    return len(text)


def summary_line(modname: str, name: str) -> str:
    """The first sentence of a public name's documentation, as plain inline text
    (cross-references become code: they would resolve against another context)."""
    home = home_of(modname, name)
    obj = getattr(importlib.import_module(home), name)
    if kind_of(obj) == "data":
        doc = data_doc(home, name)
    else:
        doc = inspect.getdoc(obj) or ""
    para = " ".join(doc.strip().split("\n\n")[0].split())
    para = _ROLE.sub(_role_to_code, para)
    cut = _sentence_end(para, ".")
    if cut > 160:
        cut = min(cut, _sentence_end(para, ";:"))
    text = para[:cut].rstrip(":;").strip()
    # plain text between the literals: no markup can start (or be left open) there
    pieces = re.split(r"(``.+?``)", text)
    return "".join(p if p.startswith("``") and p.endswith("``") and len(p) > 4
                   else re.sub(r"([*`|_\\\[\]])", r"\\\1", p) for p in pieces)
def module_rst(modname: str) -> list[str]:
    names = public_names(modname)
    lines = [f".. automodule:: {modname}", "", f".. currentmodule:: {modname}", ""]
    mod = importlib.import_module(modname)
    if names:
        lines += [".. rubric:: Public names", "", ".. list-table::", "   :class: arcnb-summary",
                  "   :widths: 30 70", ""]
        for name in names:
            lines += [f"   * - :py:obj:`{name} <{modname}.{name}>`",
                      f"     - {summary_line(modname, name) or ' '}"]
        lines.append("")
    for name in names:
        obj = getattr(mod, name)
        kind = kind_of(obj)
        home = home_of(modname, name)
        if home != modname:
            clash = f"{modname}.{name}" in sys.modules  # arcnb.overlap: named as its module
            if clash:  # the module owns the object id; the page still anchors the name
                lines += [".. raw:: html", "", f'   <span id="{modname}.{name}"></span>', ""]
            lines += [f".. py:{kind}:: {name}", f"   :module: {modname}"]
            if clash:
                lines.append("   :no-index:")
            lines += ["", f"   Re-exported from :mod:`{home}`: the same object as "
                      f":py:obj:`{home}.{name}`.", ""]
        elif kind == "data":
            lines += [f".. py:data:: {name}", f"   :module: {modname}"]
            value = _value_text(obj)
            if value is not None:
                lines.append(f"   :value: {value}")
            lines.append("")
            doc = data_doc(modname, name)
            lines += [f"   {line}" if line else "" for line in doc.splitlines()] + [""]
        elif kind == "function":
            lines += [f".. autofunction:: {modname}.{name}", ""]
        else:
            lines += [f".. auto{kind}:: {modname}.{name}", "   :members:", ""]
    return lines


class ModuleAPIDirective(SphinxDirective):
    """``.. arcnb-module:: MODULE``: the API page body of one public module."""

    required_arguments = 1
    has_content = False

    def run(self) -> list[nodes.Node]:
        modname = self.arguments[0].strip()
        if modname not in PUBLIC_MODULES:
            logger.warning("arcnb-module: %s is not in PUBLIC_MODULES", modname,
                           location=self.get_location())
        source = f"<arcnb-module {modname}>"
        content = StringList(module_rst(modname), source=source)
        return self.parse_text_to_nodes(content, offset=0)


# ================================================================ the check
def undocumented(objects, modules) -> list[str]:
    """Every problem the strict build must fail on (one sentence each), given the
    Python domain's described ``objects`` and ``modules`` (mappings keyed by the full
    name)."""
    problems = []
    for m in all_arcnb_modules():
        if m.count(".") == 1 and m not in PUBLIC_MODULES and m not in NOT_IN_API \
                and not m.split(".")[-1].startswith("_"):
            problems.append(f"module {m} is neither in the API reference (PUBLIC_MODULES "
                            "in docs/_ext/arcnb_docs.py) nor in NOT_IN_API")
    for modname in PUBLIC_MODULES:
        if modname not in modules:
            problems.append(f"public module {modname} has no API page "
                            f"(docs/api/{modname}.rst with `.. arcnb-module::`)")
            continue
        mod = importlib.import_module(modname)
        if not (mod.__doc__ or "").strip():
            problems.append(f"module {modname} has no docstring")
        for name in public_names(modname):
            full = f"{modname}.{name}"
            if not hasattr(mod, name):
                problems.append(f"{full} is listed in __all__ but does not exist")
                continue
            if full not in objects:
                problems.append(f"{full} is public but not described in the API pages")
            if home_of(modname, name) != modname:
                continue
            obj = getattr(mod, name)
            kind = kind_of(obj)
            if kind == "data":
                if not data_doc(modname, name):
                    problems.append(f"{full} has no doc comment (`#: ...` above it)")
                continue
            if not (getattr(obj, "__doc__", None) or "").strip():
                problems.append(f"{full} has no docstring")
            if kind in ("class", "exception"):
                problems += [f"{full}.{m} has no docstring"
                             for m in undocumented_members(obj)]
    return problems


def undocumented_members(cls) -> list[str]:
    """Public methods and properties of ``cls`` defined in arcnb without a docstring
    (a docstring inherited from a base class counts)."""
    out = []
    for name in sorted(dir(cls)):
        if name.startswith("_"):
            continue
        owner = next((c for c in cls.__mro__ if name in vars(c)), None)
        if owner is None or not owner.__module__.startswith("arcnb"):
            continue
        raw = vars(owner)[name]
        if isinstance(raw, property):
            has_doc = bool((raw.__doc__ or "").strip())
        elif inspect.isfunction(getattr(raw, "__func__", raw)):
            has_doc = bool(inspect.getdoc(getattr(cls, name)))
        else:
            continue
        if not has_doc:
            out.append(name)
    return out


def check_documented(app, env) -> None:
    if not app.config.arcnb_check_documented:
        return
    domain = env.get_domain("py")
    for problem in undocumented(domain.objects, domain.modules):
        logger.warning("undocumented public name: %s", problem, type="arcnb",
                       subtype="undocumented")


# ================================================================ references
def _other_library(target: str) -> bool:
    head = target.lstrip("~.").split(".")[0]
    if not head or head == "arcnb":
        return False
    head = _ALIASES.get(head, head)
    if hasattr(builtins, head):
        return True
    try:
        return importlib.util.find_spec(head) is not None
    except (ImportError, ValueError):
        return False


def _resolve_object(path: str):
    """The object named by a dotted ``arcnb...`` path (a module, or an attribute of
    one), or a sentinel when there is none."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        modname = ".".join(parts[:i])
        try:
            if importlib.util.find_spec(modname) is None:
                continue
        except (ImportError, ValueError):
            continue
        obj = importlib.import_module(modname)
        for attr in parts[i:]:
            obj = inspect.getattr_static(obj, attr, _MISSING)
            if obj is _MISSING:
                return _MISSING
        return obj
    return _MISSING


_MISSING = object()


def _public_alias(path: str, obj) -> str | None:
    """``public.module.name`` for ``path`` = ``public.module.<private submodule>.name``
    when the public module lists ``name`` and it is the same object; else None."""
    *mod, name = path.split(".")
    for i in range(len(mod) - 1, 0, -1):
        parent = ".".join(mod[:i])
        if parent in PUBLIC_MODULES and name in public_names(parent) \
                and getattr(importlib.import_module(parent), name, None) is obj:
            return f"{parent}.{name}"
    return None


def _candidates(node) -> list[str]:
    target = node.get("reftarget", "").lstrip("~.")
    mod, cls = node.get("py:module"), node.get("py:class")
    out = [target]
    if mod:
        out.append(f"{mod}.{target}")
        if cls:
            out.append(f"{mod}.{cls}.{target}")
    if target.split(".")[0].startswith("_"):
        # a private helper named from the docstring of a public name re-exported by a
        # package: look for it in the modules it could come from
        out += [f"{m}.{target}" for m in all_arcnb_modules() if mod and m.startswith(mod)]
    return [c for c in out if c.startswith("arcnb")]


def ignore_external(app, env, node, contnode):
    """Resolve what the Python domain could not, without hiding a broken reference:

    * another library's name (numpy, pandas, torch, the standard library): plain code,
      since no inventory is fetched;
    * a private submodule of a public package (``arcnb.metrics.grid``): a link to the
      package's page, which documents its public names;
    * a name through such a submodule (``arcnb.report.references.reference_table``)
      that the public package exports as the same object: a link to its entry there;
    * an existing private arcnb object (a name with a leading underscore, e.g. in a
      type hint): plain code.

    Anything else stays unresolved, and the nitpicky build reports it."""
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "")
    if _other_library(target):
        return contnode
    for path in _candidates(node):
        obj = _resolve_object(path)
        if obj is _MISSING:
            continue
        if inspect.ismodule(obj):
            parent = max((p for p in PUBLIC_MODULES if path.startswith(p + ".")),
                         key=len, default=None)
            if parent is not None:
                return env.get_domain("py").resolve_xref(
                    env, node["refdoc"], app.builder, "mod", parent, node, contnode)
        else:
            target = _public_alias(path, obj)
            if target is not None:
                return env.get_domain("py").resolve_xref(
                    env, node["refdoc"], app.builder, "obj", target, node, contnode)
        if any(part.startswith("_") for part in path.split(".")):
            return contnode
    return None


def refuse_math(app, pagename, templatename, context, doctree) -> None:
    """A page with math would load MathJax from the network: fail instead."""
    if context.get("has_maths_elements"):
        logger.warning("page %s has math, which needs MathJax from the network; write "
                       "it as code or text", pagename, type="arcnb", subtype="offline")


def check_examples(app) -> None:
    """Each notebook of ``notebooks/`` must have its executed copy in
    ``docs/examples/``, made from the notebook as it is now."""
    import nbformat

    srcdir = Path(app.srcdir)
    for src in sorted((srcdir.parent / "notebooks").glob("*.ipynb")):
        done = srcdir / "examples" / src.name
        if not done.exists():
            logger.warning("%s has not been executed for the docs: run "
                           "`python docs/execute_notebooks.py` first (`make docs` does)",
                           src.name, type="arcnb", subtype="examples")
            continue
        cells = [(c.cell_type, c.source) for c in nbformat.read(str(src), 4).cells]
        ran = [(c.cell_type, c.source) for c in nbformat.read(str(done), 4).cells
               if "injected-parameters" not in c.metadata.get("tags", [])]
        if cells != ran:
            logger.warning("docs/examples/%s was executed from an older %s: run "
                           "`python docs/execute_notebooks.py` again", src.name, src.name,
                           type="arcnb", subtype="examples")


_RESOURCE_TAG = re.compile(r"<(script|link|img|iframe|source|video|audio|embed|object|"
                           r"track|input|image|use)\b[^>]*>", re.I | re.S)
_RESOURCE_ATTR = re.compile(r"\b(src|href|data|srcset|poster|xlink:href)\s*=\s*"
                            r"[\"']\s*((?:https?:)?//[^\"']*)", re.I)
_CSS_REMOTE = re.compile(r"(url\(\s*[\"']?\s*(?:https?:)?//[^)]*\)|@import\s+[\"']?"
                         r"(?:url\()?\s*[\"']?(?:https?:)?//)", re.I)


def remote_resources(outdir: Path) -> list[str]:
    """Every resource the built site would load from the network: a ``src`` /
    ``href`` of a script, stylesheet, image, frame or media element, a CSS ``url()``
    or ``@import`` (in a page or a stylesheet). Plain links (``<a href>``) are fine."""
    found = []
    for path in sorted(outdir.rglob("*")):
        if path.suffix not in (".html", ".css", ".svg") or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        rel = path.relative_to(outdir)
        for tag in _RESOURCE_TAG.finditer(text):
            for attr in _RESOURCE_ATTR.finditer(tag.group(0)):
                found.append(f"{rel}: <{tag.group(1)} {attr.group(1)}={attr.group(2)}>")
        for m in _CSS_REMOTE.finditer(text):
            found.append(f"{rel}: {m.group(0)[:80]}")
    return found


def check_offline(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    for item in remote_resources(Path(app.outdir)):
        logger.warning("the site would load a resource from the network: %s", item,
                       type="arcnb", subtype="offline")


def dataclass_signature(app, what, name, obj, options, signature, return_annotation):
    """A dataclass field with a ``default_factory`` shows as ``<factory>``, which is not
    Python: the signature would be shown unparsed. Show ``...`` instead."""
    if signature and "<factory>" in signature:
        return signature.replace("<factory>", "..."), return_annotation
    return None


def skip_foreign_members(app, what, name, obj, skip, options):
    """Leave out a method another library generated on an arcnb class (matplotlib
    writes a ``set`` method, with its own docstring markup, on every Artist subclass,
    so on :class:`arcnb.plot.figures.ArcnbFigure`)."""
    module = getattr(obj, "__module__", None)
    if what in ("class", "exception") and inspect.isroutine(obj) and module \
            and not module.startswith("arcnb"):
        return True
    return None


def drop_object_base(app, name, obj, options, bases: list) -> None:
    """No "Bases: object" line for plain classes."""
    if bases == [object]:
        bases.clear()


def setup(app):
    app.setup_extension("sphinx.ext.autodoc")
    app.add_config_value("arcnb_check_documented", True, "env", types=frozenset({bool}))
    app.add_directive("arcnb-module", ModuleAPIDirective)
    app.connect("builder-inited", check_examples)
    app.connect("autodoc-process-signature", dataclass_signature)
    app.connect("autodoc-process-bases", drop_object_base)
    app.connect("autodoc-skip-member", skip_foreign_members)
    app.connect("env-check-consistency", check_documented)
    app.connect("missing-reference", ignore_external)
    app.connect("html-page-context", refuse_math)
    app.connect("build-finished", check_offline)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
