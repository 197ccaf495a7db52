"""Training of the grounded encoders: the character-level RNNs (Merkx & Frank 2019;
docs/protocols.md#char-rnn-encoders) and InferSent on NLI (Conneau et al. 2017).

A module per job: ``config`` (a char-RNN run's options), ``data`` (training pairs from captions and visual
anchors), ``clips`` (a video clip's visual vector: Bordes et al.'s F, A, T), ``batching`` (epoch plans with length bucketing), ``schedule`` (cyclic cosine learning rate), ``optimizer`` (Adam, fused where PyTorch has it),
``losses`` (ranking losses, Bordes et al.'s grounding losses and the dispatch of ``--loss`` to them),
``distributed`` (process group, rank shares and DistributedDataParallel under torchrun), ``checkpoint``
(resumable training state and the rules of ``--resume``), ``snapshots`` (snapshots scored on dev and the
ensemble), ``selection`` (the dev scores), ``run_manifest`` (a training run's manifest), ``progress`` (bar or
log lines), ``finite`` (the non-finite guard), ``stop`` (SIGINT/SIGTERM), ``footprint`` (memory check) and
``trainer`` (the char-RNN loop); ``nli`` (InferSent's loop) with ``nli_data`` (its NLI folders).
"""
