"""Started by ``kernelvet record`` in the recorded program (through PYTHONPATH): records the
program's custom-op calls from its first line and writes them when it exits."""
import atexit
import os
import sys

_out = os.environ.get("KERNELVET_RECORD_OUT")
if _out:
    from bot.recorder.intercept import OpRecorder

    _ns = [n for n in os.environ.get("KERNELVET_RECORD_NAMESPACES", "").split(",") if n]
    _mode = OpRecorder(_ns or None, os.environ.get("KERNELVET_RECORD_EXECUTE", "1") == "1")
    _mode.__enter__()

    def _write():
        import pickle
        with open(_out, "wb") as f:
            pickle.dump(_mode.calls, f)
    atexit.register(_write)

# A sitecustomize the environment had before this one still runs.
_here = os.path.dirname(os.path.abspath(__file__))
_path = [p for p in sys.path if os.path.abspath(p or ".") != _here]
_saved, sys.path[:] = sys.path[:], _path
sys.modules.pop("sitecustomize", None)
try:
    import sitecustomize  # noqa: F401
except ImportError:
    pass
finally:
    sys.path[:] = _saved
