"""The character-level encoders benchbox trains (Merkx & Frank 2019), by encoder name: the recurrent layer and the
pooling over time. One table, read by the encoder classes (:mod:`benchbox.encoders.char_rnn`) and by training
(:mod:`benchbox.training.config`, ``benchbox train NAME``); it imports nothing, so that the command line can list
the architectures without loading torch."""

#: encoder name → (recurrent layer, pooling)
ARCHITECTURES = {"char-gru": ("gru", "attention"), "char-lstm": ("lstm", "attention"), "char-gru-max": ("gru", "max")}
