"""Debian's Chromium as the benchmarks drive it with Playwright (``executable_path``: no browser is downloaded)."""

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
