"""scripts/hudi-cli: the seed's hudi-cli inspection as command files, and the wrapper that runs one.

No hudi-cli 1.x bundle can be fetched here, so these tests check what the wrapper renders and runs
(--dry-run, or a stand-in launcher that records its argv) rather than hudi-cli's output."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts" / "hudi-cli"
WRAPPER = SCRIPTS / "run-hudi-cli.sh"


def run(*args, env=None):
    return subprocess.run(["bash", str(WRAPPER), *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=60)


def test_seed_commands_in_order():
    lines = [ln for ln in (SCRIPTS / "seed-inspection-mor.txt").read_text().splitlines()
             if ln and not ln.startswith("//")]
    assert lines == ["connect --path @TABLE_PATH@", "desc", "fetch table schema", "commits show", "stats wa",
                     "compactions show all"]
    cow = (SCRIPTS / "seed-inspection-cow.txt").read_text()
    assert "compactions show all" not in cow and "stats wa" in cow


def test_local_dry_run_renders_the_path_and_the_java_command(tmp_path):
    jar = tmp_path / "hudi-cli-bundle_2.12-1.2.0.jar"
    jar.write_bytes(b"")
    p = run("--dry-run", "--path", "s3://lake/moma/artworks_mor", str(SCRIPTS / "commits-show.txt"),
            env={"HUDI_CLI_BUNDLE_JAR": str(jar)})
    assert p.returncode == 0, p.stderr
    assert "connect --path s3://lake/moma/artworks_mor\ncommits show\n" in p.stdout
    assert not any(ln.startswith("//") for ln in p.stdout.split("# command:")[0].splitlines())
    command = p.stdout.split("# command:")[1]
    assert "org.apache.hudi.cli.Main @" in command and str(jar) in command


def test_emr_mode_uses_cmdfile_for_hudi_cli_sh_and_at_file_for_the_bundle(tmp_path):
    for name, expected in (("hudi-cli.sh", "--cmdfile"), ("hudi-cli-with-bundle.sh", "@")):
        launcher = tmp_path / name
        launcher.write_text('#!/usr/bin/env bash\nfor a in "$@"; do echo "ARG $a"; f="${a#@}"; '
                            '[ -f "$f" ] && sed "s/^/FILE /" "$f"; done; exit 0\n')
        launcher.chmod(0o755)
        p = run("--emr", "--path", "/data/artists_cow", str(SCRIPTS / "seed-inspection-cow.txt"),
                env={"HUDI_CLI": str(launcher)})
        assert p.returncode == 0, p.stderr
        args = [ln[4:] for ln in p.stdout.splitlines() if ln.startswith("ARG ")]
        assert args[0].startswith(expected)
        assert "FILE connect --path /data/artists_cow" in p.stdout and "FILE stats wa" in p.stdout


def test_missing_cli_bundle_is_one_clear_error(tmp_path):
    p = run("--path", "/x", str(SCRIPTS / "commits-show.txt"), env={"HUDI_CLI_BUNDLE_JAR": ""})
    assert p.returncode == 5
    assert p.stderr.strip().startswith("error: HUDI_CLI_BUNDLE_JAR")


def test_usage_errors():
    assert run(str(SCRIPTS / "commits-show.txt")).returncode == 2
    assert run("--path", "/x").returncode == 2
