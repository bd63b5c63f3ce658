"""The weir binary's own answers, as built by scripts/build <preset>."""

from __future__ import annotations

import subprocess

PRESETS = {"debug", "release", "asan"}


def test_version_names_the_preset_the_binary_was_built_with(build_dir):
    # WEIR_PRESET=release scripts/test runs this against build/release: it must say release,
    # not CMake's build type (RelWithDebInfo).
    assert build_dir.name in PRESETS, f"{build_dir} is not a preset's build directory"
    run = subprocess.run([str(build_dir / "weir"), "--version"], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    first = run.stdout.splitlines()[0]
    assert first.startswith("weir ") and first.endswith(f" ({build_dir.name})"), run.stdout
