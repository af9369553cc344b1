"""Paths the reliability tests share."""

from docgraph.testing.data import shared_data_dir

OPENSTAX = shared_data_dir() / "documents" / "openstax_world_history_v1_excerpt.pdf"
ACCIONA = shared_data_dir() / "documents" / "acciona_sustainability_report_2020_p1.pdf"
