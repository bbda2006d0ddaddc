"""Renderers of a :class:`~ranklens.report.Report`: terminal, Markdown, CSV, LaTeX, pandas,
and a self-contained HTML page with inline SVG charts."""
