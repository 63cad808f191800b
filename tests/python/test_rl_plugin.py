"""One torch for the C++ deep-RL plugin and the Python RL libraries (CMakeLists.txt builds the
plugin against .venv's torch), and a clear error when the plugin meets another LibTorch.

Both run the command installed in .venv, from another folder, as a user does."""

import json
import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

import torch

CLI = Path(sysconfig.get_path("scripts")) / "hlogym"


def run(args, cwd, **env):
    environ = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "HLOGYM_ROOT", "HLOGYM_BUILD_DIR", "LD_LIBRARY_PATH")
    }
    environ.update(env)
    return subprocess.run(
        [str(CLI), *args], cwd=cwd, env=environ, capture_output=True, text=True, timeout=300
    )


def test_plugin_runs_on_the_torch_of_the_python_rl_libraries(tmp_path):
    """The installed plugin loads, and the LibTorch it loaded is the one inside the torch
    package that Stable-Baselines3 and RLlib import, at the same version it was built against."""
    out = run(["doctor", "--json"], tmp_path)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["plugin"]["loaded"], report["plugin"]["error"]
    assert Path(report["plugin"]["path"]).resolve().is_relative_to(Path(sysconfig.get_path("data")))
    loaded = Path(report["libtorch"]["path"]).resolve()
    assert loaded.is_relative_to(Path(torch.__file__).parent.resolve()), loaded
    assert report["libtorch"]["version"] == torch.__version__
    assert report["plugin"]["built_against"] == torch.__version__
    assert report["python"]["packages"]["torch"] == torch.__version__.split("+")[0]


def test_plugin_against_another_libtorch_says_which_and_how_to_rebuild(tmp_path):
    """A LibTorch of another version first on the library path (as Debian's libtorch 1.13 once
    was) makes the plugin fail to load: the error names the torch it was built against, the one
    found and where, and the command that rebuilds it; `doctor` says the same."""
    other = tmp_path / "torch-1.13"
    (other / "lib").mkdir(parents=True)
    (other / "version.py").write_text("__version__ = '1.13.0'\n")
    for name in ("libtorch_cpu.so", "libc10.so"):  # empty libraries: every symbol is missing
        subprocess.run(
            [
                shutil.which("cc"),
                "-shared",
                "-o",
                str(other / "lib" / name),
                "-x",
                "c",
                "/dev/null",
            ],
            check=True,
        )
    out = run(
        ["eval", "--agent", "policy:ppo-gpt2", "--suite", "smoke/einsum"],
        tmp_path,
        LD_LIBRARY_PATH=str(other / "lib"),
    )
    assert out.returncode == 2, out.stdout + out.stderr
    assert f"built against LibTorch {torch.__version__}" in out.stderr, out.stderr
    assert (
        f"found LibTorch 1.13.0 at {other / 'lib' / 'libtorch_cpu.so'} (through LD_LIBRARY_PATH)"
    ) in out.stderr, out.stderr
    assert "scripts/setup.sh --rl" in out.stderr
    doctor = run(["doctor", "--json"], tmp_path, LD_LIBRARY_PATH=str(other / "lib"))
    assert doctor.returncode == 0, doctor.stderr
    report = json.loads(doctor.stdout)
    assert not report["plugin"]["loaded"]
    assert report["libtorch"]["version"] == "1.13.0"
    assert report["libtorch"]["found_through"] == "LD_LIBRARY_PATH"
