"""Every kernel variant this machine supports, forced with WEBNN_CPU_ISA, on edge sizes."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

import webnn

LEVELS = ["ref", "avx2", "avx512"]


def supported(level):
    return LEVELS.index(level) <= LEVELS.index(webnn._core.detected_isa())


@pytest.mark.parametrize("level", LEVELS)
def test_kernel_sweep_at_isa_level(level):
    if not supported(level):
        pytest.skip(f"this CPU does not support {level}")
    env = dict(os.environ, WEBNN_CPU_ISA=level)
    probe = subprocess.run([sys.executable, "-c", "import webnn; print(webnn._core.active_isa())"],
                           env=env, capture_output=True, text=True, check=True)
    assert probe.stdout.strip() == level
    result = subprocess.run([sys.executable, str(Path(__file__).with_name("isa_sweep.py"))], env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
