"""Taxonomy sits below the models: importing any ``reliab.taxonomy`` module, and attributing,
loads nothing from ``reliab.models`` (attribution names cause and evidence; costs come after)."""

from __future__ import annotations

import json
import subprocess
import sys

_CHILD = """
import importlib, json, pkgutil, sys
import reliab.taxonomy as tax
names = [m.name for m in pkgutil.walk_packages(tax.__path__, "reliab.taxonomy.")]
for name in names:
    importlib.import_module(name)
from reliab.taxonomy import attribute
from reliab.schema import empty
attribute(empty("signals"), empty("jobs"))
print(json.dumps({"modules": names, "models": sorted(m for m in sys.modules if m.startswith("reliab.models"))}))
"""


def test_taxonomy_imports_no_models():
    out = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, check=True, timeout=120)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert "reliab.taxonomy._attribute" in got["modules"]
    assert got["models"] == []
