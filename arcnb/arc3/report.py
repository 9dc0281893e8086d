"""``arcnb arc3 report`` moved to :mod:`arcnb.report.arc3`; this name stays for
``arc3/command.py`` until that module moves to ``arcnb/commands/``."""
from ..report.arc3 import REPORT_FILES, build_report

__all__ = ["build_report", "REPORT_FILES"]
