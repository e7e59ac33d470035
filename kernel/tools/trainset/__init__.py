"""Training data from runs: the agents' step records as chat fine-tuning sets, VisualAgentBench's
behaviour-cloning samples and Hugging Face datasets (``launch export --format``, docs/training.md)."""

from kernel.tools.trainset.runs import ExportError, Filters, parse_min_metric
from kernel.tools.trainset.write import FORMATS, export_training, parse_mix

__all__ = ["FORMATS", "ExportError", "Filters", "export_training", "parse_min_metric", "parse_mix"]
