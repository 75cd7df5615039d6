"""A path hint (``sacct``, ``ticket``) counts only in the file's name or its own folder's.

Found when a checkout folder called ``sacct`` made training logs with table pipes read as sacct.
"""

from __future__ import annotations

from reliab.io.formats._hostpath import named_for


def test_hint_from_the_file_or_its_folder_only():
    assert named_for("/x/slurm/sacct-2024-06-01.txt", "sacct")
    assert named_for("/x/sacct/jobs.txt", "sacct")
    assert not named_for("/work/sacct/train/run.log", "sacct")
    assert not named_for("/home/ticketing/logs/train.log", "ticket")
    assert named_for("C:\\handover\\tickets\\2024.csv", "ticket")


def test_training_log_under_a_sacct_checkout_is_not_sacct(tmp_path):
    import reliab

    folder = tmp_path / "sacct" / "train"
    folder.mkdir(parents=True)
    # a training log whose progress table has pipes (the shape that made the hint fire)
    lines = [f"| step {i} | loss 2.{i:02d} | lr 3e-4 | tokens/s 1.2e5 |" for i in range(20)]
    (folder / "run.log").write_text("\n".join(lines) + "\n")
    res = reliab.ingest(tmp_path)
    assert "sacct" not in set(res.accounting["source"].astype(str))
    assert len(res.jobs) == 0
