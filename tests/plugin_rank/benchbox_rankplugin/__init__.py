"""benchbox-rankplugin: an outside plugin whose task is tested by its own kind of paired test (issue #54).

- ``trigram-projection``: a seeded random projection of character-trigram counts (``seed`` is its seed option);
- ``paraphrase-rank``: each sentence ranks the paraphrases of the file, both directions; MRR tested by the
  plugin's own kind (:class:`benchbox_rankplugin.kind.SignFlipReciprocalRank`), R@1 and mean rank by ``ranks``;
- ``paraphrase-sts``: a task declared in ``tasks.toml``, shipped through the ``benchbox.tasks`` entry point group.
"""
