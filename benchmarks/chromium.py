"""Debian's Chromium as the benchmarks drive it with Playwright (``executable_path``: no browser is downloaded)."""

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]


def page_seconds(page, base: str, start: tuple[str, str], path: str, shown: str) -> tuple[float, float]:
    """Seconds until ``shown`` shows on ``path``: reached in the app from the page ``start`` (its path and a text it
    shows), by the router's own navigation as a link click makes it; then loaded afresh from its address."""
    import time

    page.goto(f"{base}{start[0]}")
    page.get_by_text(start[1]).filter(visible=True).first.wait_for()
    t0 = time.perf_counter()
    page.evaluate("p => { history.pushState({}, '', p); dispatchEvent(new PopStateEvent('popstate')); }", path)
    page.get_by_text(shown).filter(visible=True).first.wait_for()
    clicked = time.perf_counter() - t0
    t0 = time.perf_counter()
    page.goto(f"{base}{path}")
    page.get_by_text(shown).filter(visible=True).first.wait_for()
    return clicked, time.perf_counter() - t0
