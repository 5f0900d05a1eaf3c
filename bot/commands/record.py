"""kernelvet record (in progress)."""


def register(sub) -> None:
    pass
