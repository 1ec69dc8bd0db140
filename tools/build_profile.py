"""Per-file compile time and peak compiler memory of the C++ build.

Runs every compile command of a configured Ninja build folder one at a time (nothing else should run
meanwhile) under /usr/bin/time, and prints the files sorted by time with their peak resident memory,
then the totals. The slowest files are where build time goes (template expansion across data types x
ISAs x tile shapes is the usual cause).

    cmake -S . -B build/profile -G Ninja -DCMAKE_BUILD_TYPE=Release
    python tools/build_profile.py build/profile [--top 15] [--match depthwise]
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile


def compile_commands(build_dir):
    """(object file, command) of every C++ compile in the Ninja build."""
    text = subprocess.run(["ninja", "-C", build_dir, "-t", "commands"], capture_output=True, text=True,
                          check=True).stdout
    out = []
    for line in text.splitlines():
        line = line.split("&&")[-1].strip() if "&&" in line else line.strip()
        words = shlex.split(line)
        if not words or " -c " not in f" {line} " or "-o" not in words:
            continue
        out.append((words[words.index("-o") + 1], line))
    return out


def measure(build_dir, obj, command):
    """(seconds, peak KiB) of one compile, its output sent to a scratch file."""
    with tempfile.TemporaryDirectory() as scratch:
        command = command.replace(f" -o {obj}", f" -o {os.path.join(scratch, 'out.o')}")
        command = re.sub(r" -MD -MT \S+ -MF \S+", "", command)
        done = subprocess.run(["/usr/bin/time", "-f", "%e %M", "bash", "-c", command], cwd=build_dir,
                              capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"build_profile: compiling {obj} failed:\n{done.stderr[-2000:]}")
    seconds, kib = done.stderr.strip().splitlines()[-1].split()
    return float(seconds), int(kib)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("build_dir", help="a configured Ninja build folder")
    parser.add_argument("--top", type=int, default=15, help="files to list (default 15)")
    parser.add_argument("--match", default="", help="only objects whose path contains this")
    args = parser.parse_args()
    commands = [(o, c) for o, c in compile_commands(args.build_dir) if args.match in o]
    if not commands:
        sys.exit(f"build_profile: no compile commands in {args.build_dir} (configured with -G Ninja?)")
    rows = []
    for i, (obj, command) in enumerate(commands):
        seconds, kib = measure(args.build_dir, obj, command)
        rows.append((seconds, kib, obj))
        print(f"[{i + 1}/{len(commands)}] {seconds:7.1f} s {kib / 1024:7.0f} MiB  {obj}", file=sys.stderr)
    rows.sort(reverse=True)
    print(f"{'seconds':>8} {'peak MiB':>9}  object")
    for seconds, kib, obj in rows[:args.top]:
        print(f"{seconds:8.1f} {kib / 1024:9.0f}  {obj}")
    total = sum(r[0] for r in rows)
    peak = max(r[1] for r in rows)
    print(f"{total:8.1f} {peak / 1024:9.0f}  total compile time of {len(rows)} files (one at a time), peak memory")


if __name__ == "__main__":
    main()
