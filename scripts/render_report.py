"""Render an HTML report (or any page) to a PNG screenshot with headless Chromium, as a user's
browser would show it — to look at the report before shipping it.

    python scripts/render_report.py REPORT/index.html [--out shot.png] [--width 1400] [--height 6000]

Installs Debian's `chromium` with apt-get when no Chromium is on PATH (needs root). The browser
runs with networking features off; a self-contained report renders completely regardless.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
)


def browser() -> str:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    print("no Chromium found: installing Debian's chromium (apt-get) ...", file=sys.stderr)
    subprocess.run(["apt-get", "install", "-y", "-q", "chromium"], check=True)
    path = shutil.which("chromium")
    if not path:
        sys.exit("chromium is still not on PATH after apt-get install")
    return path


def render(page: Path, out: Path, width: int, height: int) -> None:
    with tempfile.TemporaryDirectory() as profile:
        cmd = [
            browser(),
            *FLAGS,
            f"--user-data-dir={profile}",
            f"--window-size={width},{height}",
            f"--screenshot={out.resolve()}",
            page.resolve().as_uri(),
        ]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=180)
    print(f"wrote {out} ({width} x {height} px) from {page}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("page", type=Path, help="the HTML file")
    ap.add_argument("--out", type=Path, help="PNG to write (default: beside the page, .png)")
    ap.add_argument("--width", type=int, default=1400, help="window width in pixels (default 1400)")
    ap.add_argument(
        "--height", type=int, default=6000, help="window height in pixels: the part of the page captured (default 6000)"
    )
    args = ap.parse_args()
    if not args.page.is_file():
        sys.exit(f"{args.page} is not a file")
    render(args.page, args.out or args.page.with_suffix(".png"), args.width, args.height)


if __name__ == "__main__":
    main()
