"""Reproducers of findings, and their confirmation on a GPU (kernelvet repro, kernelvet confirm)."""
