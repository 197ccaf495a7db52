"""Storage: run folders and their manifests, the embedding cache, atomic writes, output folders."""
