"""A reproduction resumes: a model's finished study cell is reused (benchbox/reuse.py)."""

from __future__ import annotations


def test_a_file_outside_the_data_root_is_the_same_data_while_unchanged(tmp_path):
    """A study cell that read a file outside the data root (the hypernym task's WordNet, labelled by its absolute
    path) is reused while that file is unchanged: it was run again on every resume of a study (and of
    ``benchbox reproduce vendrov2016``), 13 minutes of training each time."""
    from benchbox.data.root import DataRoot
    from benchbox.reuse import data_unchanged
    from benchbox.task_contract.protocol import resolve_tasks

    noun = tmp_path / "data.noun"
    noun.write_text("00001740 03 n 01 entity 0 000 | that which is perceived\n")
    data = DataRoot(tmp_path / "root")
    recorded = data.checksums([noun])
    task = resolve_tasks(["hypernym"])[0]
    assert list(recorded) == [str(noun)] and data_unchanged(recorded, data, task)
    noun.write_text("changed\n")
    assert not data_unchanged(recorded, DataRoot(tmp_path / "root"), task)
