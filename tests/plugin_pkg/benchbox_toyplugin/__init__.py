"""benchbox-toyplugin: a TF-IDF encoder (``tfidf``) and a paraphrase task (``toy-paraphrase``) for benchbox.

The worked example of ``docs/plugins.md``: both are registered through entry points in ``pyproject.toml``,
and the encoder is duck-typed (it does not subclass ``benchbox.encoding.protocol.Encoder``).
"""
