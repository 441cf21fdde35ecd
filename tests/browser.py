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


def new_page(playwright):
    """A desktop-sized page of a fresh headless chromium."""
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    return browser.new_context(viewport=DESKTOP).new_page()


def log_in(page, url: str, username: str = "alice") -> None:
    """Open ``url`` (an anonymous visitor lands on the login form) and log in as ``username``."""
    page.goto(url)
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
