import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory):
    """One kernelvet result cache for the session's runs on copies of the example repository: what
    one test verified, the next reuses (the cache is keyed by IR, not by path)."""
    return tmp_path_factory.mktemp("kernelvet-cache")
