"""Embedders: the offline multilingual-e5-small engines, endpoint text and image embedders,
and the caches they share."""
