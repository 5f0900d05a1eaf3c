"""A program for `kernelvet record`: one forward pass of tests/recorder_model.py's decoder at the
sizes the recorder chose, for the config it chose."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import recorder_model  # noqa: E402
from bot.recorder import config_path, sizes  # noqa: E402

size = sizes(batch=2, seq_len=7, num_blocks=4)
model = recorder_model.load(Path(config_path("examples/minivllm/models/MistralForCausalLM.json")))
model.forward(size["batch"], size["seq_len"], size["num_blocks"])
