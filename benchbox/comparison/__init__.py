"""Comparison: sources (runs, encoders, published numbers), paired tests, claims."""
