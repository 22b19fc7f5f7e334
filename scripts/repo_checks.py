"""What scripts/docs-check.py and scripts/size-check.py share: the files git
tracks, and how a check reports what it found wrong."""
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def tracked():
    """Every file git tracks, as paths from the repository's root."""
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [pathlib.PurePosixPath(p) for p in out.splitlines()]


def fail_if(broken, headline):
    """Exits with status 1, `headline` and each of `broken` on stderr, when there is any."""
    if broken:
        print(f"error: {headline}:", file=sys.stderr)
        for b in broken:
            print("  " + b, file=sys.stderr)
        sys.exit(1)
