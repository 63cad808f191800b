"""MkDocs hook: the command-line page shows the help the `hlogym` command itself prints, so the
page cannot drift from the command. The marker ``<!-- hlogym-help -->`` in cli.md is replaced by
``hlogym --help`` and every subcommand's ``--help``, run at build time. The command is
$HLOGYM_CLI, else build/hlogym beside mkdocs.yml; a missing one fails the build."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

MARKER = "<!-- hlogym-help -->"


def _cli(config) -> Path:
    cli = Path(
        os.environ.get("HLOGYM_CLI") or Path(config.config_file_path).parent / "build" / "hlogym"
    )
    if not cli.is_file():
        raise FileNotFoundError(f"{cli} is missing: build hlogym first (scripts/setup.sh)")
    return cli


def _help(cli: Path, *args: str) -> str:
    out = subprocess.run([str(cli), *args, "--help"], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise RuntimeError(f"hlogym {' '.join(args)} --help failed: {out.stderr}")
    return out.stdout.rstrip()


def _subcommands(top_help: str) -> list[str]:
    """The names listed under "Subcommands:" in `hlogym --help`."""
    if "Subcommands:" not in top_help:
        raise RuntimeError("hlogym --help lists no subcommands")
    section = top_help.split("Subcommands:", 1)[1]
    return re.findall(r"^ {2}(\S+) ", section, flags=re.M)


def on_page_markdown(markdown, page, config, files):
    if MARKER not in markdown:
        return markdown
    cli = _cli(config)
    top = _help(cli)
    parts = ["```text", top, "```"]
    for name in _subcommands(top):
        parts += [f"### hlogym {name}", "", "```text", _help(cli, name), "```", ""]
    return markdown.replace(MARKER, "\n".join(parts))
