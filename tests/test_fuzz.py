"""The fuzzers in tools/ run for a bounded time in subprocesses, so a crash is a failure that
names the call in flight (the last line of the log). WEBNN_FUZZ_SECONDS sets the time per run
(default 8; CI runs longer campaigns as a separate stage)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[1] / "tools"
SECONDS = float(os.environ.get("WEBNN_FUZZ_SECONDS", "8"))


def run_fuzzer(script, seed, tmp_path, *extra):
    log = tmp_path / f"{script}.{seed}.log"
    command = [sys.executable, str(TOOLS / script), "--seed", str(seed), "--seconds", str(SECONDS),
               "--log", str(log), *extra]
    result = subprocess.run(command, capture_output=True, text=True, timeout=SECONDS * 4 + 120)
    if result.returncode != 0:
        last = log.read_text().splitlines()[-1:] if log.exists() else []
        pytest.fail(f"{script} --seed {seed} exited with {result.returncode}\nstderr: {result.stderr[-3000:]}\n"
                    f"call in flight: {last}")
    assert "no finding" in result.stdout, result.stdout


@pytest.mark.parametrize("seed", [1, 2])
def test_builder_fuzzer(seed, tmp_path):
    run_fuzzer("fuzz_builder.py", seed, tmp_path)


@pytest.mark.parametrize("seed", [1])
def test_file_fuzzer(seed, tmp_path):
    run_fuzzer("fuzz_files.py", seed, tmp_path, "--crash-dir", str(tmp_path / "findings"))
