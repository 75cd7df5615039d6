"""Slurm hostlist expansion and compression (reliab.io.formats.slurm.hostlist)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reliab.io.formats.slurm.hostlist import compress_hostlist, expand_hostlist


@pytest.mark.parametrize(
    ("expr", "hosts"),
    [
        ("node[0001-0003,0007],gpu1", ["node0001", "node0002", "node0003", "node0007", "gpu1"]),
        ("gl111", ["gl111"]),
        ("", []),
        ("n[8-10]", ["n8", "n9", "n10"]),
        ("n[08-10]", ["n08", "n09", "n10"]),
        ("rack[1-2]-n[01-02]", ["rack1-n01", "rack1-n02", "rack2-n01", "rack2-n02"]),
        ("a[1-2]b,c", ["a1b", "a2b", "c"]),
    ],
)
def test_expand_examples(expr: str, hosts: list[str]) -> None:
    """reference: hostlist semantics of scontrol show hostnames."""
    assert expand_hostlist(expr) == hosts


@pytest.mark.parametrize("expr", ["node[1-", "node]1[", "n[3-1]", "n[a-b]", "n[]", "n[[1]]"])
def test_expand_rejects_bad_expressions(expr: str) -> None:
    with pytest.raises(ValueError, match="hostlist"):
        expand_hostlist(expr)


def test_compress_sample_cluster_nodelist() -> None:
    """regression: the NodeList shape of docs/raw-formats.md survives a round trip."""
    expr = "node[0001-0420,0422-2048,2050]"
    assert compress_hostlist(expand_hostlist(expr)) == expr
    assert compress_hostlist(["node0002", "node0001", "gpu1", "node0003"]) == "gpu1,node[0001-0003]"


def test_compress_rejects_bracketed_names() -> None:
    with pytest.raises(ValueError, match="cannot compress"):
        compress_hostlist(["node[1]"])


_host = st.builds(
    lambda prefix, digits, suffix: f"{prefix}{digits}{suffix}",
    st.text("abcxyz-", min_size=1, max_size=4),
    st.text("0123456789", max_size=5),
    st.sampled_from(["", "", "-ib", "x"]),
).filter(lambda h: h.strip() == h and h)


@settings(max_examples=300, deadline=None)
@given(st.lists(_host, max_size=30))
def test_round_trip(hosts: list[str]) -> None:
    expr = compress_hostlist(hosts)
    expanded = expand_hostlist(expr)
    assert sorted(expanded) == sorted(set(hosts))
    assert compress_hostlist(expanded) == expr
