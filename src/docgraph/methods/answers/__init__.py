"""What the methods answer with: citations, the offline extractive answer and its fallback,
and the claim check of a model's answer."""
