"""What the browser tests share: Debian's chromium for Playwright, the viewports pages are checked at,
and the check that no page scrolls sideways."""

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
PASSWORD = "correct-horse-battery"  # tests/factories.py


def assert_no_sideways_scroll(page, name: str) -> None:
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"{name} scrolls sideways by {overflow}px at {page.viewport_size['width']}px"
