"""hlogym as an installed package: what a user gets from `pip install .`, run from another folder
with no PYTHONPATH, no checkout in sight.

scripts/setup.sh builds the wheel (build/dist/) and installs it into .venv; these tests use
that install, and install the same wheel into a fresh virtual environment of their own.
"""

import json
import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
WHEELS = sorted((REPO / "build" / "dist").glob("hlogym-*.whl"))
if not WHEELS:  # scripts/setup.sh builds it; a missing wheel is a failure, not a skip
    raise RuntimeError(f"no hlogym wheel in {REPO / 'build' / 'dist'}; run scripts/setup.sh")
CORPUS_MODULE = "gpt2/gpt2_infer_L2_d128_h8_s64_b2_f32"
MLP_TRAIN = REPO / "datasets" / "smoke" / "mlp_train.hlo"

# Run in a fresh process, in a folder of its own: imports hlogym, and prints what it found.
PROBE = (
    """
import importlib.metadata, json, sys
import hlogym
from hlogym import _locate
env = hlogym.make(benchmark_locs=["smoke/einsum"], traj_limit=2)
obs, info = env.reset(seed=0)
obs, reward, terminated, truncated, info = env.step(0)
print(json.dumps({
    "file": hlogym.__file__,
    "version": hlogym.__version__,
    "metadata_version": importlib.metadata.version("hlogym"),
    "data_root": hlogym.data_root(),
    "corpus_module": hlogym.resolve_benchmark("%s"),
    "cli": str(_locate.cli_binary()),
    "prefix": sys.prefix,
}))
"""
    % CORPUS_MODULE
)


def clean_env() -> dict:
    """The environment without anything that points into the checkout."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "HLOGYM_ROOT", "HLOGYM_BUILD_DIR")
    }
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def probe(python: Path, cwd: Path) -> dict:
    out = subprocess.run(
        [str(python), "-c", PROBE],
        cwd=cwd,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def check_installed(found: dict, prefix: Path):
    """Everything comes from the environment at `prefix`, none of it from the checkout."""
    prefix = prefix.resolve()
    for key in ("file", "data_root", "corpus_module", "cli"):
        path = Path(found[key]).resolve()
        assert path.is_relative_to(prefix), f"{key} = {path} is not inside {prefix}"
    assert Path(found["data_root"]).resolve() == prefix / "share" / "hlogym"
    assert Path(found["cli"]).resolve() == prefix / "bin" / "hlogym"
    # One version number, from CMakeLists.txt: the package metadata, the extension, the CLI.
    assert found["version"] == found["metadata_version"]
    cli = subprocess.run(
        [found["cli"], "--version"], capture_output=True, text=True, env=clean_env(), timeout=60
    )
    assert cli.returncode == 0 and cli.stdout.strip() == found["version"], cli


def test_venv_has_this_tree_installed(tmp_path):
    """The project's .venv imports hlogym from another folder without PYTHONPATH, and what it
    imports is this tree's package (setup.sh reinstalls it when anything changes)."""
    found = probe(Path(sys.executable), tmp_path)
    check_installed(found, Path(sys.prefix))
    installed = Path(found["file"]).parent
    for source in sorted((REPO / "python" / "hlogym").glob("*.py")):
        copy = installed / source.name
        assert copy.is_file(), f"{copy} is missing: run scripts/setup.sh"
        assert copy.read_bytes() == source.read_bytes(), (
            f"{copy} differs from {source}: run scripts/setup.sh"
        )
    cmake = (REPO / "CMakeLists.txt").read_text()
    assert f"project(hlogym VERSION {found['version']} " in cmake


def run_cli(folder: Path, *args: str, timeout: int) -> subprocess.CompletedProcess:
    """The installed `hlogym ARGS`, run in `folder` with nothing pointing into the checkout."""
    cli = Path(sysconfig.get_path("scripts")) / "hlogym"
    return subprocess.run(
        [str(cli), *args],
        cwd=folder,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_cli_from_another_folder(tmp_path):
    """The installed command reads corpus and smoke modules by name from the installed data."""
    for name in (CORPUS_MODULE, "smoke/einsum"):
        out = run_cli(tmp_path, "stats", name, "--json", timeout=120)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)[0]["op_count"] > 0
    # The shipped policies by name: the deep-RL plugin from lib/hlogym/, the policy from the
    # data. Their answers replay through `hlogym opt` (the generalist's may name a sequence,
    # its passes joined by '+', as one pass).
    for policy in ("policy:ppo-gpt2", "policy:generalist"):
        out = run_cli(
            tmp_path,
            "search",
            "--algo",
            policy,
            "--suite",
            "smoke/mlp_train",
            "-q",
            "--json",
            timeout=300,
        )
        assert out.returncode == 0, out.stderr
        row = json.loads(out.stdout)["benchmarks"][0]
        assert row["valid"] and row["R"] <= row["D"], row
        replayed = run_cli(
            tmp_path,
            "opt",
            str(MLP_TRAIN),
            "--passes",
            ",".join(row["passes"]),
            "-o",
            "out.hlo",
            timeout=120,
        )
        assert replayed.returncode == 0, replayed.stderr
        stats = run_cli(tmp_path, "stats", "out.hlo", "--json", timeout=120)
        assert json.loads(stats.stdout)[0]["op_count"] == row["R"], (policy, row)
    bad = run_cli(tmp_path, "stats", "gpt2/no_such_module", timeout=60)
    assert bad.returncode == 2 and "no_such_module" in bad.stderr
    # A dataset folder of the installed data as a suite, with X from its manifest.
    out = run_cli(
        tmp_path,
        "eval",
        "--agent",
        "default",
        "--suite",
        "datasets/xla_optimized",
        "-q",
        "--json",
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["summary"]["benchmarks"] >= 100
    assert report["summary"]["with_x"] == report["summary"]["benchmarks"]


def test_wheel_in_a_fresh_environment(tmp_path):
    """The wheel alone makes a working install: package, extension, CLI and data land in a new
    virtual environment and are found there (its dependencies, numpy and gymnasium, are lent
    from .venv through a .pth file, so that no network is needed)."""
    fresh = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(fresh)
    python = fresh / "bin" / "python"
    pip = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            "--disable-pip-version-check",
            str(WHEELS[-1]),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert pip.returncode == 0, pip.stderr
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (site / "lent_dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    work = tmp_path / "elsewhere"
    work.mkdir()
    found = probe(python, work)
    check_installed(found, fresh)
    assert found["prefix"] == str(fresh)


def test_a_broken_install_says_what_is_missing(tmp_path):
    """Without the extension the package still imports (hlogym.xla works on jaxlib alone), and
    using the environment names the missing piece instead of an AttributeError."""
    package = tmp_path / "hlogym"
    package.mkdir()
    for source in (REPO / "python" / "hlogym").glob("*.py"):
        (package / source.name).write_bytes(source.read_bytes())
    code = (
        "import hlogym\n"
        "try:\n    hlogym.make\nexcept ImportError as e:\n    print('ImportError', e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ImportError") and "_hlogym" in out.stdout


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
