"""Evaluation: benchmark loaders, the papers' metrics, judges, and the runner comparing methods."""
