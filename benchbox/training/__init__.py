"""Training of the character-level grounded encoders (Merkx & Frank 2019; docs/protocols.md#char-rnn-encoders).

``losses`` (ranking losses and Bordes et al.'s grounding losses), ``schedule`` (cyclic cosine learning rate),
``batching`` (epoch plans with length bucketing), ``data`` (training pairs from captions and visual
anchors), ``checkpoint`` (resumable training state), ``selection`` (dev scores of snapshots) and ``trainer``
(the loop, single-process or DistributedDataParallel under torchrun).
"""
