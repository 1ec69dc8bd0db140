"""The C++ folders only point down: core <- kernels <- graph <- compiler <- runtime <- formats.

Read from each source file's own #include lines. Kernels are a leaf library over core: they
include nothing from graph/, compiler/, runtime/ or formats/.
"""
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "cpp" / "src"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/', re.MULTILINE)
# What each folder may include besides itself.
ALLOWED = {
    "core": set(),
    "kernels": {"core"},
}


def includes_by_file(folder):
    for path in sorted((SRC / folder).rglob("*")):
        if path.suffix in (".h", ".cc"):
            yield path, set(INCLUDE.findall(path.read_text()))


@pytest.mark.skipif(not SRC.is_dir(), reason="the C++ sources are not beside the tests")
@pytest.mark.parametrize("folder", sorted(ALLOWED))
def test_folder_includes_only_lower_layers(folder):
    bad = {str(path.relative_to(SRC)): sorted(used - ALLOWED[folder] - {folder})
           for path, used in includes_by_file(folder) if used - ALLOWED[folder] - {folder}}
    assert not bad, f"{folder}/ must include only {sorted(ALLOWED[folder]) or 'itself'}: {bad}"
