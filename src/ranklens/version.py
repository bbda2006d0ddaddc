"""The one place the core distribution's version is written (read by the build too)."""

__version__ = "0.2.0"  # unreleased: see CHANGELOG.md
