"""kernelvet analyzers: everything that understands CUDA (front end, KIR, engine, checks)."""

__version__ = "0.1.0"
