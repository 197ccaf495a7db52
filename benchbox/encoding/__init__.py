"""The encoder contract in one place: what an encoder is and how benchbox gets one.

- :mod:`.protocol`: :class:`~benchbox.encoding.protocol.Encoder` (a list of sentences in, a float32 matrix out,
  a fingerprint), its grounded subclasses, and the one guard around every call into an encoder's code;
- :mod:`.adapter`: any object with ``encode(list[str])``, or a plain callable, as an ``Encoder``;
- :mod:`.options`: the options an encoder is built with, typed once by its signature;
- :mod:`.loading`: ``load_encoder``, an ``Encoder`` from an object, a registry name, a trained-model folder or
  ``module:attribute``, with its build attached.

What an encoder returns is checked by :mod:`benchbox.embedding_checks`, below this package: the embedding cache
(:mod:`benchbox.storage.cache`) and the tasks apply the same checks. What a run records of an encoder, and its
embedding-cache key, are in :mod:`benchbox.storage.identity`. ``benchbox.encoders`` (with an s) holds the encoders.
"""
