"""kernelvet bot: where and when analysis runs (CLI, manifest, driver, reporters, GitHub)."""

__version__ = "0.1.0"
