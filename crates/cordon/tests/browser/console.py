"""The console in a real browser: Debian's chromium, driven headless by Playwright.

Run by crates/cordon/tests/ui_browser.rs, which starts `cordon ui` and passes, in the
environment: CORDON_UI_URL (the URL with the token), CORDON_BIN, CORDON_CONFIG,
CORDON_WORKSPACE, CORDON_HOME, CORDON_STATE_DIR and CORDON_SCREENSHOTS. The harness parts
run `cordon exec --pending` exactly as an agent harness would: run, see "pending approval
N", wait for the answer, run again. Exits non-zero with a reason at the first failure.

Playwright's Python API: https://playwright.dev/python/docs/api/class-page
(launch with `executable_path` for a browser Playwright did not download).
"""
import http.server
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from urllib.parse import urlsplit

from playwright.sync_api import sync_playwright

URL = os.environ["CORDON_UI_URL"]
BASE = "{0.scheme}://{0.netloc}".format(urlsplit(URL))
BIN = os.environ["CORDON_BIN"]
SHOTS = os.environ["CORDON_SCREENSHOTS"]
PENDING = 5
XSS = "<script>window.__pwned=1</script><img src=x onerror=window.__pwned=2>"


def fail(why):
    print("FAILED: " + why, file=sys.stderr)
    sys.exit(1)


def check(cond, why):
    if not cond:
        fail(why)


def env():
    return {
        "HOME": os.environ["CORDON_HOME"],
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "CORDON_STATE_DIR": os.environ["CORDON_STATE_DIR"],
    }


def cordon(*args):
    return subprocess.run([BIN, *args], env=env(), cwd=os.environ["CORDON_WORKSPACE"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)


def exec_call(session, *cmd):
    return cordon("exec", "--isolated", "--config", os.environ["CORDON_CONFIG"], "--pending",
                  "--session", session, "--", *cmd)


def answer_of(pending_id):
    """The console's answer to a pending approval, from the audit log (None: not yet)."""
    out = cordon("audit", "tail", "-n", "200", "--json").stdout
    for line in out.splitlines():
        r = json.loads(line)
        if r.get("event") == "approval-answered" and r.get("pending") == pending_id:
            return r
    return None


class Harness(threading.Thread):
    """Runs a call with --pending and, like a harness, waits for the human's answer, then
    runs it again if it was approved."""

    def __init__(self, session, *cmd):
        super().__init__(daemon=True)
        self.session, self.cmd = session, cmd
        self.first = self.final = self.answer = None
        self.pending = threading.Event()

    def run(self):
        self.first = exec_call(self.session, *self.cmd)
        m = re.search(r"pending approval (\d+)", self.first.stderr)
        if self.first.returncode != PENDING or not m:
            self.pending.set()
            return
        self.id = int(m.group(1))
        self.pending.set()
        deadline = time.time() + 60
        while time.time() < deadline:
            self.answer = answer_of(self.id)
            if self.answer:
                break
            time.sleep(0.2)
        if self.answer and self.answer["answer"] != "deny":
            self.final = exec_call(self.session, *self.cmd)


class Hello(http.server.BaseHTTPRequestHandler):
    """The upstream a contained run may reach (through cordon's egress proxy)."""

    def do_GET(self):
        self.send_response(200)
        self.send_header("content-length", "5")
        self.end_headers()
        self.wfile.write(b"hello")

    def log_message(self, *args):
        pass


def audit_records():
    return [json.loads(l) for l in cordon("audit", "tail", "-n", "500", "--json").stdout.splitlines()]


def status(path, headers=None, data=None):
    req = urllib.request.Request(BASE + path, headers=headers or {}, data=data,
                                 method="POST" if data is not None else "GET")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def shot(page, name):
    page.wait_for_timeout(300)
    page.screenshot(path=os.path.join(SHOTS, name + ".png"), full_page=True)


def card(page, pending_id):
    return page.locator('[data-pending="%d"]' % pending_id)


def main():
    os.makedirs(SHOTS, exist_ok=True)
    # Without the token: refused, over plain HTTP and in the browser.
    check(status("/") == 401, "GET / without the token was not refused")
    check(status("/api/state") == 401, "GET /api/state without the token was not refused")
    check(status("/?token=" + "0" * 64) == 401, "a wrong token was not refused")

    args = ["--no-sandbox"] if os.geteuid() == 0 else []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=args)
        anon = browser.new_context().new_page()
        r = anon.goto(BASE + "/")
        check(r.status == 401, "the browser got %d without the token" % r.status)
        check("open the URL" in anon.content(), "the refusal does not say what to do")

        ctx = browser.new_context(viewport={"width": 1400, "height": 900})
        page = ctx.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        r = page.goto(URL)
        check(page.url == BASE + "/", "the token stays in the address bar: " + page.url)
        page.wait_for_selector("#live:not(.off)", timeout=10000)

        # 1. Approve from the page; the waiting harness run proceeds.
        h = Harness("s-approve", "echo", "approved-run " + XSS)
        h.start()
        h.pending.wait(60)
        check(h.first.returncode == PENDING, "the first run was not left pending: %r" % (h.first,))
        page.goto(BASE + "/#pending")
        card(page, h.id).wait_for(timeout=10000)
        # The command text carrying <script> is shown as text and ran nothing.
        shown = card(page, h.id).locator("code.call").inner_text()
        check(XSS in shown, "the call is not shown verbatim: %r" % shown)
        check(page.evaluate("window.__pwned") is None, "script in a command text ran")
        check(page.evaluate("document.querySelectorAll('script').length") == 1,
              "a script element came from the data")
        check(page.evaluate("document.querySelectorAll('img').length") == 0,
              "an img element came from the data")
        shot(page, "pending")
        card(page, h.id).locator('[data-act="once"]').click()
        h.join(60)
        check(h.answer is not None and h.answer.get("answered_by") == "console",
              "the answer is not audited with the console as its source: %r" % (h.answer,))
        check(h.final is not None and h.final.returncode == 0,
              "the approved run did not proceed: %r" % (h.final,))
        check("approved-run" in h.final.stdout, "the approved run printed %r" % h.final.stdout)
        card(page, h.id).wait_for(state="detached", timeout=10000)

        # The decisions page shows the records live, rendered inert; a row opens the record.
        page.goto(BASE + "/#decisions")
        # The approved run's last record (its exit status); the live feed may bring it a
        # moment after the records before it, so wait for that row, not the first match.
        ran = [r for r in audit_records() if "approved-run" in json.dumps(r) and "exit_status" in r]
        check(bool(ran), "the approved run left no record with its exit status")
        row = page.locator('#rows tr[data-seq="%d"]' % ran[-1]["seq"])
        row.wait_for(timeout=10000)
        check("approved-run" in row.inner_text(), "the run's row does not show its command")
        row.click()
        page.locator("#detail pre.raw").wait_for(timeout=5000)
        check("exit_status" in page.locator("#detail").inner_text(),
              "the full record is not shown")
        check(page.evaluate("window.__pwned") is None, "script in a record ran")
        cell = row.locator("td.decision")
        check("exit 0" in cell.inner_text() and "failed" not in (cell.get_attribute("class") or ""),
              "the approved run's row does not say it ended with exit 0: %r" % cell.inner_text())
        # A run that failed is shown failed, never in the colour of an allow.
        failed = exec_call("s-fail", "sh", "-c", "exit 3")
        check(failed.returncode == 3, "the failing run ended %r: %s" % (failed.returncode, failed.stderr))
        end = [r for r in audit_records() if r.get("session") == "s-fail" and r.get("phase") == "end"]
        check(bool(end), "the failing run left no end record")
        cell = page.locator('#rows tr[data-seq="%d"] td.decision' % end[-1]["seq"])
        cell.wait_for(timeout=10000)
        check("exit 3" in cell.inner_text(), "the failed run's row says %r" % cell.inner_text())
        check("failed" in (cell.get_attribute("class") or "").split(),
              "the failed run's row is not marked failed: %r" % cell.get_attribute("class"))
        page.select_option("#f-decision", "ask")
        shot(page, "decisions")
        page.select_option("#f-decision", "")

        # 2. Deny from the page; the harness does not run the call.
        h = Harness("s-deny", "echo", "denied-run")
        h.start()
        h.pending.wait(60)
        check(h.first.returncode == PENDING, "the run to deny was not left pending: %r" % (h.first,))
        page.goto(BASE + "/#pending")
        card(page, h.id).wait_for(timeout=10000)
        card(page, h.id).locator('[data-act="deny"]').click()
        h.join(60)
        check(h.answer is not None and h.answer["answer"] == "deny", "the denial is not audited: %r" % (h.answer,))
        check(h.final is None, "a denied call was run again")
        check("denied-run" not in json.dumps(cordon("approvals", "list", "--json").stdout),
              "the denied approval is still pending")

        # 3. Approve for the session, see the session's next call allowed, revoke the lease
        # on the leases page, and see the next call asked again.
        h = Harness("s-lease", "echo", "leased-run")
        h.start()
        h.pending.wait(60)
        page.goto(BASE + "/#pending")
        card(page, h.id).wait_for(timeout=10000)
        card(page, h.id).locator('[data-act="session"]').click()
        h.join(60)
        check(h.final is not None and h.final.returncode == 0, "the session-approved run did not proceed: %r" % (h.final,))
        again = exec_call("s-lease", "echo", "leased-run")
        check(again.returncode == 0, "the session lease did not cover the next call: %r" % (again,))
        page.goto(BASE + "/#grants")
        lease_row = page.locator("#leases tr", has_text="session s-lease")
        lease_row.wait_for(timeout=10000)
        shot(page, "grants")
        lease_row.locator("button", has_text="revoke").click()
        lease_row.wait_for(state="detached", timeout=10000)
        after = exec_call("s-lease", "echo", "leased-run")
        check(after.returncode == PENDING and "pending approval" in after.stderr,
              "after the revoke the call was not asked: %r" % (after,))

        # 3b. Always allow from the page: the rule is saved where `cordon approvals rules`
        # reads it, and the identical call runs again without asking, in any session.
        h = Harness("s-always", "echo", "always-run")
        h.start()
        h.pending.wait(60)
        check(h.first.returncode == PENDING, "the run to always allow was not left pending: %r" % (h.first,))
        page.goto(BASE + "/#pending")
        card(page, h.id).wait_for(timeout=10000)
        rule = card(page, h.id).locator('[data-act="always"]').get_attribute("title").removeprefix("saves ")
        check(rule.startswith("Bash("), "the always button does not name its rule: %r" % rule)
        card(page, h.id).locator('[data-act="always"]').click()
        h.join(60)
        check(h.answer is not None and h.answer["answer"] == "always-allow" and h.answer.get("answered_by") == "console",
              "the always answer is not audited from the console: %r" % (h.answer,))
        check(h.final is not None and h.final.returncode == 0, "the always-allowed run did not proceed: %r" % (h.final,))
        rules = cordon("approvals", "rules").stdout
        check(rule in rules, "the saved rule %r is not listed by `cordon approvals rules`: %r" % (rule, rules))
        page.goto(BASE + "/#grants")
        page.locator("#rules tr", has_text=rule).wait_for(timeout=10000)
        again = exec_call("s-other", "echo", "always-run")
        check(again.returncode == 0 and "pending approval" not in again.stderr,
              "the identical call was asked again after always allow: %r" % (again,))
        check("always-run" in again.stdout, "the always-allowed call printed %r" % again.stdout)

        # A command text carrying bidirectional controls is shown with them escaped, never
        # reordered: what the human reads is the text the shell runs.
        bidi = "x=\u202e\u2066 echo pushed; echo fetched;#\u2069\u2066 1 echo status # \u2069\u202c"
        req = json.dumps({"tool": "Bash", "input": {"command": bidi},
                          "cwd": os.environ["CORDON_WORKSPACE"], "operation_id": "op-bidi"})
        asked = cordon("check", "--isolated", "--config", os.environ["CORDON_CONFIG"], "--pending", req)
        check(asked.returncode == PENDING, "the bidi call was not left pending: %r" % (asked,))
        bid = json.loads(asked.stdout)["pending"]
        page.goto(BASE + "/#pending")
        card(page, bid).wait_for(timeout=10000)
        shown = card(page, bid).inner_text()
        check(not any(c in shown for c in "\u202e\u2066\u2069\u202c"),
              "a bidirectional control reached the page: %r" % shown)
        check("\\u{202E}" in shown and "echo pushed" in shown,
              "the bidi call is not shown escaped: %r" % shown)
        card(page, bid).locator('[data-act="deny"]').click()
        card(page, bid).wait_for(state="detached", timeout=10000)

        # 4. Approve with an edited input: an edit the policy denies is refused and the call
        # stays pending; an allowed edit is what the caller gets back.
        req = json.dumps({"tool": "Bash", "input": {"command": "echo original-call"},
                          "cwd": os.environ["CORDON_WORKSPACE"], "operation_id": "op-edit"})
        first = cordon("check", "--isolated", "--config", os.environ["CORDON_CONFIG"], "--pending", req)
        check(first.returncode == PENDING, "the call to edit was not left pending: %r" % (first,))
        eid = json.loads(first.stdout)["pending"]
        page.goto(BASE + "/#pending")
        card(page, eid).wait_for(timeout=10000)
        card(page, eid).locator('[data-act="edit"]').click()
        box = card(page, eid).locator("textarea")
        box.fill(json.dumps({"command": "cat " + os.path.join(os.environ["CORDON_HOME"], ".ssh/id_rsa")}))
        card(page, eid).locator('[data-act="edited"]').click()
        page.wait_for_selector("#notice.error", timeout=10000)
        check("denied" in page.inner_text("#notice"), "the denied edit's refusal: %r" % page.inner_text("#notice"))
        check(card(page, eid).count() == 1, "a refused edit answered the approval")
        page.wait_for_timeout(3500)  # a periodic refresh passes; the open editor stays
        check(box.is_visible(), "the refresh closed the editor")
        box.fill(json.dumps({"command": "echo edited-call"}))
        shot(page, "pending-edit")
        card(page, eid).locator('[data-act="edited"]').click()
        card(page, eid).wait_for(state="detached", timeout=10000)
        again = cordon("check", "--isolated", "--config", os.environ["CORDON_CONFIG"], "--pending", req)
        check(again.returncode == 0, "the edited approval did not let the call through: %r" % (again,))
        check(json.loads(again.stdout).get("updated_input", {}).get("command") == "echo edited-call",
              "the caller did not get the edited input: %s" % again.stdout)
        check((answer_of(eid) or {}).get("answer") == "approve-edited", "the edit is not audited")

        # 5. A cross-origin POST is refused (from another origin's page, and with a forged
        # Origin header); the state is unchanged.
        pending_before = cordon("approvals", "list", "--json").stdout
        evil = ctx.new_page()
        evil.route("http://attacker.test/", lambda route: route.fulfill(
            status=200, content_type="text/html", body="<html><body>attacker</body></html>"))
        evil.goto("http://attacker.test/")
        pid = int(re.search(r'"id":(\d+)', pending_before).group(1))
        got = evil.evaluate("""async ([base, id]) => {
            try {
              const r = await fetch(base + "/api/answer", {method: "POST", credentials: "include",
                headers: {"content-type": "text/plain"}, body: JSON.stringify({id, answer: "once"})});
              return r.status;
            } catch (e) { return "blocked: " + e.message; }
        }""", [BASE, pid])
        check(got != 200, "a cross-origin POST from another page got 200")
        forged = page.evaluate("""async ([id]) => {
            const s = await (await fetch("/api/state")).json();
            return s.csrf;
        }""", [pid])
        code = status("/api/answer", headers={"origin": "http://attacker.test", "content-type": "application/json",
                                               "x-cordon-csrf": forged}, data=json.dumps({"id": pid, "answer": "once"}).encode())
        check(code in (401, 403), "a POST with a foreign Origin got %d" % code)
        check(cordon("approvals", "list", "--json").stdout == pending_before, "a refused POST changed the store")

        # 6. The egress log of a run: a contained run reaches an allowed upstream and is
        # refused another host; the run's end record shows both in its detail view.
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        port = srv.server_address[1]
        net_cfg = os.path.join(os.path.dirname(os.environ["CORDON_WORKSPACE"]), "egress.toml")
        with open(net_cfg, "w") as f:
            f.write('[defaults]\nexec = "allow"\nnetwork = "allow"\n')
        script = ("curl -s --max-time 10 http://127.0.0.1:%d/ok; echo; "
                  "curl -s -o /dev/null -w '%%{http_code}' --max-time 10 http://refused.example/leak" % port)
        run = cordon("exec", "--isolated", "--config", net_cfg, "--allow-net", "127.0.0.1:%d" % port,
                     "--allow-private", "127.0.0.1/32", "--session", "s-egress", "--", "sh", "-c", script)
        srv.shutdown()
        check(run.returncode == 0 and run.stdout.startswith("hello\n403"), "the egress run: %r" % (run,))
        end = [r for r in audit_records() if r.get("session") == "s-egress" and r.get("phase") == "end"]
        check(len(end) == 1 and end[0].get("egress", {}).get("refused") == 1,
              "the run's end record has no egress log: %r" % (end,))
        page.goto(BASE + "/#decisions")
        page.fill("#f-session", "s-egress")
        end_row = page.locator('#rows tr[data-seq="%d"]' % end[0]["seq"])
        end_row.wait_for(timeout=10000)
        end_row.click()
        refused = page.locator('#detail tr[data-egress="deny"]')
        refused.wait_for(timeout=5000)
        check("refused.example:80" in refused.inner_text() and "not-allowed" in refused.inner_text(),
              "the refused host is not shown: %r" % refused.inner_text())
        allowed = page.locator('#detail tr[data-egress="allow"]')
        check("127.0.0.1:%d" % port in allowed.inner_text(), "the allowed request is not shown")
        check("1 allowed, 1 refused" in page.inner_text("#detail .egress-summary"), "the egress counts are not shown")
        refused.scroll_into_view_if_needed()
        shot(page, "egress")
        page.fill("#f-session", "")

        # 6b. A run held for review (`exec --hold`): the Changes page shows its set, the
        # file name and content it wrote (markup both) as text, and Apply lands it.
        held_cfg = os.path.join(os.path.dirname(os.environ["CORDON_WORKSPACE"]), "held.toml")
        with open(held_cfg, "w") as f:
            f.write('[defaults]\nexec = "allow"\n')
        name = "<img src=x onerror=window.__pwned=4>.txt"
        run = cordon("exec", "--isolated", "--config", held_cfg, "--hold", "--", "sh", "-c",
                     "echo held-change > held.txt; echo '%s' > '%s'" % (XSS, name))
        check(run.returncode == 0, "the held run: %r" % (run,))
        listed = [json.loads(l) for l in cordon("changes", "list", "--json").stdout.splitlines()]
        check(len(listed) == 1 and listed[0]["held"], "the held set is not listed: %r" % (listed,))
        set_id = listed[0]["id"]
        held_file = os.path.join(os.environ["CORDON_WORKSPACE"], "held.txt")
        check(not os.path.exists(held_file), "a held change landed before review")
        page.goto(BASE + "/#changes")
        set_card = page.locator('[data-changes="%s"]' % set_id)
        set_card.wait_for(timeout=10000)
        check("held whole" in set_card.inner_text(), "the card does not say why the set waits")
        set_card.locator('[data-act="show"]').click()
        shown = set_card.locator(".entry code.path", has_text="onerror")
        shown.wait_for(timeout=10000)
        check(name in shown.inner_text(), "the file name is not shown verbatim: %r" % shown.inner_text())
        check(XSS in set_card.locator("pre.diff").last.inner_text() or
              XSS in set_card.inner_text(), "the diff is not shown verbatim")
        check(page.evaluate("window.__pwned") is None, "markup in a change set ran")
        check(page.evaluate("document.querySelectorAll('img').length") == 0,
              "an img element came from a change set")
        shot(page, "changes")
        set_card.locator('[data-act="apply"]').click()
        set_card.wait_for(state="detached", timeout=10000)
        page.wait_for_selector("#changes-result:not([hidden])", timeout=10000)
        check("landed" in page.inner_text("#changes-result"), "the answer does not say what landed")
        check(open(held_file).read() == "held-change\n", "Apply did not land the held file")
        check(cordon("changes", "list", "--json").stdout.strip() == "", "the applied set is still listed")

        # 7. The audit chain page.
        page.goto(BASE + "/#audit")
        page.wait_for_selector("#verify.ok", timeout=10000)
        check("Intact" in page.inner_text("#verify"), "the chain is not reported intact")
        shot(page, "audit")
        # The refused edit's 422 is expected (chromium logs every failed fetch); nothing else.
        errors = [e for e in errors if "status of 422" not in e]
        check(not errors, "the page logged errors: %r" % errors)
        browser.close()
    print("console browser test: all steps passed")


if __name__ == "__main__":
    main()
