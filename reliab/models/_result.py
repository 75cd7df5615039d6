"""Moved to :mod:`reliab._result` (so that ``taxonomy`` need not import ``models``).

Kept as a re-export for code written against the old private path; new code imports
``reliab._result``.
"""

from reliab._result import ResultMixin, json_safe, new_figure  # noqa: F401
