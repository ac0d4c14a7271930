"""Driver of bench/ui.sh: how long a decision takes to become a row in an open console
page, and how large the console is after many decisions.

Starts `cordon ui`, opens it in headless chromium (Playwright), watches the decisions
table with a MutationObserver, and appends records with the audit_load example: first
RATE/s for SECONDS (latency = when the row appeared - the record's `time`, which the log
stamps when the record is appended), then up to TOTAL records as fast as the writer goes
(the page draws the newest rows of each animation frame, so the measure there is when the
last record's row is on top), after which it reads the console's resident memory from /proc.
"""
import json
import os
import subprocess
import sys
import time

from playwright.sync_api import sync_playwright

cfg = json.loads(sys.argv[1])
work, cordon, load = cfg["work"], cfg["cordon"], cfg["load"]
rate, seconds, total = cfg["rate"], cfg["seconds"], cfg["total"]
log = os.path.join(work, "audit.jsonl")
env = {"HOME": work, "PATH": "/usr/local/bin:/usr/bin:/bin", "CORDON_STATE_DIR": work}


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p / 100))]


ui = subprocess.Popen([cordon, "ui", "--listen", "127.0.0.1:0", "--isolated"], env=env,
                      stdout=subprocess.PIPE, text=True)
try:
    url = ui.stdout.readline().strip().split("open ", 1)[1]
    args = ["--no-sandbox"] if os.geteuid() == 0 else []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=args)
        page = browser.new_page()
        page.goto(url)
        page.wait_for_selector("#live:not(.off)")
        page.evaluate("""() => {
            window.__lat = [];
            new MutationObserver((ms) => {
              const now = Date.now();
              for (const m of ms) for (const n of m.addedNodes) {
                if (n.tagName !== "TR" || !n.firstChild) continue;
                const sent = Date.parse(n.firstChild.textContent.replace(" ", "T") + "Z");
                if (!isNaN(sent)) window.__lat.push(now - sent);
              }
            }).observe(document.getElementById("rows"), {childList: true});
        }""")
        rss_idle = rss_kib(ui.pid)
        n = rate * seconds
        out = subprocess.run([load, log, str(rate), str(n)], capture_output=True, text=True, check=True)
        writer = out.stdout.strip()
        print("paced writer done: " + writer, file=sys.stderr, flush=True)
        deadline = time.time() + 30
        while time.time() < deadline and page.evaluate("window.__lat.length") < n:
            time.sleep(0.2)
        lat = page.evaluate("window.__lat")
        rest = total - n
        bulk_start = time.time()
        subprocess.run([load, log, "0", str(rest)], capture_output=True, text=True, check=True)
        bulk_written = time.time() - bulk_start
        # The page draws only the newest rows of each frame, so it has caught up when the
        # last record's row is on top.
        newest = "(document.querySelector('#rows tr') || {dataset: {}}).dataset.seq"
        deadline = time.time() + 120
        while time.time() < deadline and page.evaluate(newest) != str(total):
            time.sleep(0.2)
        caught_up = time.time() - bulk_start
        seen = page.evaluate("window.__lat.length")
        print("bulk writer done; rows seen %d" % seen, file=sys.stderr, flush=True)
        page_ok = page.evaluate(newest) == str(total)
        time.sleep(1)
        rss_after = rss_kib(ui.pid)
        browser.close()
finally:
    ui.kill()
    ui.wait()

print("| measure | value |")
print("|---|---|")
print("| writer (written at once, not fsynced) | %s |" % writer)
print("| rows seen at %d/s | %d of %d |" % (rate, len(lat), n))
print("| decision -> row p50 | %d ms |" % pct(lat, 50))
print("| decision -> row p99 | %d ms |" % pct(lat, 99))
print("| decision -> row max | %d ms |" % max(lat))
print("| bulk: %d records written in | %.1f s |" % (rest, bulk_written))
print("| bulk: page showing the last record after | %s |" % ("%.1f s" % caught_up if page_ok else "not within 120 s"))
print("| rows drawn in all (the newest of each frame) | %d of %d |" % (seen, total))
print("| console RSS, page open, before | %.1f MiB |" % (rss_idle / 1024))
print("| console RSS after %d decisions | %.1f MiB |" % (total, rss_after / 1024))
