"""Data access: the data root, datasets, word vectors, image features and published numbers."""
