"""Drive the web console in headless Chromium (Selenium, Debian's
chromedriver) and print what it saw as one JSON object; the Rust test
(crates/forest-cli/tests/cli/console.rs) judges it.

usage: console_browser.py BASE_URL SCOPED_TOKEN OWNER_TOKEN [SHOTS_DIR]
SHOTS_DIR non-empty: write console-{search,browse,node,health}.png there.
"""

import json
import os
import sys
import time

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait


def browser():
    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1200,900"):
        opts.add_argument(a)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)


def alerts(d):
    """Count (and dismiss) pending alerts: hostile text must raise none."""
    n = 0
    while True:
        try:
            d.switch_to.alert.dismiss()
            n += 1
        except NoAlertPresentException:
            return n


def sign_in(d, base, token):
    d.get(base + "/ui/login")
    box = d.find_element(By.ID, "token")
    box.send_keys(token)
    box.send_keys(Keys.ENTER)
    WebDriverWait(d, 20).until(ec.url_contains("/ui/search"))


def result_ids(d):
    return [li.get_attribute("data-id") for li in d.find_elements(By.CSS_SELECTOR, "#results li")]


def shot(d, shots, name):
    if shots:
        os.makedirs(shots, exist_ok=True)
        height = d.execute_script("return document.documentElement.scrollHeight")
        d.set_window_size(1200, max(600, min(int(height) + 200, 2600)))
        d.save_screenshot(os.path.join(shots, f"console-{name}.png"))
        d.set_window_size(1200, 900)


def main():
    base, scoped, owner = sys.argv[1], sys.argv[2], sys.argv[3]
    shots = sys.argv[4] if len(sys.argv) > 4 else ""
    out = {"alerts": 0, "scoped_texts": []}
    d = browser()
    try:
        d.set_page_load_timeout(30)
        # No cookie: the login form.
        d.get(base + "/ui/search?q=build")
        out["no_cookie_url"] = d.current_url
        sign_in(d, base, scoped)
        out["login_url"] = d.current_url
        # The keyboard reaches the search box; search as you type.
        box = d.find_element(By.ID, "q")
        box.click()
        out["keyboard_focus"] = d.switch_to.active_element.get_attribute("id")
        box.send_keys("build pipeline")
        try:
            WebDriverWait(d, 20).until(lambda x: "engineering/build" in result_ids(x))
        except TimeoutException:
            pass
        out["typed_ids"] = result_ids(d)
        box.send_keys(Keys.ENTER)
        WebDriverWait(d, 20).until(ec.url_contains("q=build"))
        out["search_ids"] = result_ids(d)
        out["scoped_texts"].append(d.find_element(By.TAG_NAME, "body").text)
        shot(d, shots, "search")
        # Open the node from the results.
        d.find_element(By.CSS_SELECTOR, '#results li[data-id="engineering/build"] a.title').click()
        WebDriverWait(d, 20).until(ec.presence_of_element_located((By.ID, "node-id")))
        out["node_id"] = d.find_element(By.ID, "node-id").text
        out["scoped_texts"].append(d.find_element(By.TAG_NAME, "body").text)
        shot(d, shots, "node")
        # Browse to it from the token's roots.
        d.find_element(By.LINK_TEXT, "Browse").click()
        d.find_element(By.LINK_TEXT, "engineering/_index").click()
        out["scoped_texts"].append(d.find_element(By.TAG_NAME, "body").text)
        shot(d, shots, "browse")
        d.find_element(By.LINK_TEXT, "engineering/build").click()
        WebDriverWait(d, 20).until(ec.presence_of_element_located((By.ID, "node-id")))
        out["browsed_to"] = d.find_element(By.ID, "node-id").text
        # A hostile node: shown as text, no script runs.
        d.get(base + "/ui/node/engineering/xss")
        time.sleep(0.5)
        out["alerts"] += alerts(d)
        out["xss_title_text"] = d.find_element(By.TAG_NAME, "h1").text
        d.get(base + "/ui/search?q=zebra")
        time.sleep(0.5)
        out["alerts"] += alerts(d)
        out["scoped_texts"].append(d.find_element(By.TAG_NAME, "body").text)
        # hr/ by URL: not found; health: only this token's branch.
        d.get(base + "/ui/node/hr/salaries")
        out["scoped_texts"].append(d.find_element(By.TAG_NAME, "body").text)
        d.get(base + "/ui/search?q=zanzibar+salaries")
        out["scoped_texts"].append(d.find_element(By.TAG_NAME, "body").text)
        d.get(base + "/ui/health")
        out["scoped_texts"].append(d.find_element(By.TAG_NAME, "body").text)
        out["health_svgs"] = len(d.find_elements(By.CSS_SELECTOR, "svg.plot"))
        # Sign out; the owner's token sees hr/ (and the run history).
        d.find_element(By.XPATH, "//button[text()='Sign out']").click()
        WebDriverWait(d, 20).until(ec.url_contains("/ui/login"))
        sign_in(d, base, owner)
        d.get(base + "/ui/search?q=zanzibar")
        out["owner_sees_hr"] = "hr/salaries" in result_ids(d)
        d.get(base + "/ui/health")
        shot(d, shots, "health")
    finally:
        d.quit()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
