"""`benchbox reproduce PAPER`: a paper's tables beside benchbox's numbers, with a verdict per cell."""
