"""Reproducers of findings, and their confirmation on a GPU (kernelvet repro, kernelvet confirm)."""

STATUSES = ("confirmed", "not-reproduced", "not-runnable")  # what confirm says of a finding
FIELDS = ("status", "tool", "detail")  # a confirmation, as reports carry it
