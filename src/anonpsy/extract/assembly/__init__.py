"""Assembly: the case graph built from the mentions and their assertion status."""
