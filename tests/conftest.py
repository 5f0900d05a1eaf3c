import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import pytest  # noqa: E402


def pytest_configure(config):
    """Compile kernelvet's modules once, before the workers start. The suite starts a Python
    process for every CLI run (about 150); where PYTHONDONTWRITEBYTECODE is set, as on some CI
    images, each of them compiled the sources again (0.4 s a process). Bytecode goes to the
    ignored __pycache__ folders, as a plain import would write it."""
    if hasattr(config, "workerinput"):
        return  # a pytest-xdist worker: the controller did it
    import compileall

    root = Path(__file__).resolve().parent.parent
    for package in ("analyzers", "bot"):
        compileall.compile_dir(root / package, quiet=2)


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory):
    """One kernelvet result cache for the session's runs on copies of the example repository: what
    one test verified, the next reuses (the cache is keyed by IR, not by path)."""
    return tmp_path_factory.mktemp("kernelvet-cache")
