"""The coverage report's shares: rounded down, so a target is never met by rounding."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.coverage import _share  # noqa: E402


def test_a_share_just_under_a_target_does_not_round_up_to_it():
    assert _share(132, 166) == "79.5%"
    assert _share(2, 3) == "66.6%"
    assert _share(133, 166) == "80.1%"


def test_whole_and_empty_shares():
    assert _share(5, 5) == "100.0%"
    assert _share(0, 0) == "0.0%"


def test_sources_a_cmake_glob_collects_are_built_and_others_are_not(tmp_path):
    """llama.cpp names its CUDA sources with file(GLOB ...): those are built; a source no CMake
    file names, by path, name or glob, is not (a stand-alone test program)."""
    from bench.coverage import KernelRow, mark_unbuilt

    (tmp_path / "CMakeLists.txt").write_text("add_subdirectory(backend)\n")
    backend = tmp_path / "backend"
    (backend / "instances").mkdir(parents=True)
    (backend / "CMakeLists.txt").write_text(
        'file(GLOB   SOURCES_CUDA "*.cu")\nfile(GLOB SRCS CONFIGURE_DEPENDS "instances/mmq*.cu")\n'
        'file(GLOB_RECURSE EXTRA "${OTHER_DIR}/*.cu")\n')
    for name in ("norm.cu", "instances/mmq-q4.cu", "instances/fattn-q8.cu"):
        (backend / name).write_text("")
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "bench_main.cu").write_text("")
    rows = [KernelRow(name, file, 1, verdict="not reached") for name, file in
            [("norm", "backend/norm.cu"), ("mmq", "backend/instances/mmq-q4.cu"),
             ("fattn", "backend/instances/fattn-q8.cu"), ("bench", "tools/bench_main.cu")]]
    mark_unbuilt(tmp_path, rows)
    unbuilt = sorted(r.name for r in rows if r.reason.startswith("not built"))
    assert unbuilt == ["bench", "fattn"], unbuilt
