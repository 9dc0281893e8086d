"""arcnb's version (its own module, so that any module can read it without importing the
package root)."""

#: arcnb's version.
__version__ = "0.1.0"
