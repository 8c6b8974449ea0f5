"""The sticky PR comment (action.yml ``comment: true``): create, then update, one comment.

A fake GitHub API on 127.0.0.1 replays a recorded exchange
(``data/pr_comment_exchange.json``): it checks each request against the next
recorded one (method, path, token, API headers) and answers with the recorded
response. No network.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from action_helpers import REPO_ROOT

from budgetlint.report import BudgetResult, Report
from budgetlint.reporters.pr_comment import COMMENT_LIMIT, render_comment
from budgetlint import github_comment as pr_comment
from budgetlint.run.check import run_check
from budgetlint.run.diff import compare

EXCHANGE = json.loads((Path(__file__).parent / "data" / "pr_comment_exchange.json").read_text(encoding="utf-8"))
TOKEN = "ghs_test-token"


class FakeGitHub:
    """Replays the recorded exchange; records what it was sent."""

    def __init__(self) -> None:
        self.expected = list(EXCHANGE["exchange"])
        self.seen: list[dict] = []
        self.errors: list[str] = []
        self.posted = ""
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                fake.seen.append({"method": self.command, "path": self.path, "body": body,
                                  "headers": {k.lower(): v for k, v in self.headers.items()}})
                if not fake.expected:
                    fake.errors.append(f"unexpected {self.command} {self.path}")
                    self.send_response(500)
                    self.end_headers()
                    return
                step = fake.expected.pop(0)
                want = step["request"]
                if (self.command, self.path) != (want["method"], want["path"]):
                    fake.errors.append(f"got {self.command} {self.path}, the recording has {want['method']} {want['path']}")
                if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                    fake.errors.append(f"{self.command} {self.path}: no bearer token")
                if self.headers.get("Accept") != "application/vnd.github+json" or \
                        self.headers.get("X-GitHub-Api-Version") != "2022-11-28":
                    fake.errors.append(f"{self.command} {self.path}: not the REST API's headers")
                if self.command in ("POST", "PATCH"):
                    fake.posted = body["body"]
                api = f"http://127.0.0.1:{fake.port}"
                text = json.dumps(step["response"]["body"]).replace("{api}", api)
                text = text.replace('"{posted body}"', json.dumps(fake.posted))
                data = text.encode("utf-8")
                self.send_response(step["response"]["status"])
                for k, v in step["response"]["headers"].items():
                    self.send_header(k, v.replace("{api}", api))
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = _serve

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "FakeGitHub":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def _env(tmp_path: Path, port: int) -> dict[str, str]:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"action": "synchronize", "number": 7, "pull_request": {"number": 7}}))
    return {"GITHUB_TOKEN": TOKEN, "GITHUB_API_URL": f"http://127.0.0.1:{port}",
            "GITHUB_REPOSITORY": "acme/budgets", "GITHUB_EVENT_PATH": str(event), "GITHUB_WORKFLOW": "Budgets"}


def _report_file(tmp_path: Path, name: str, paths: list[str]) -> Path:
    out = tmp_path / name
    out.write_text(json.dumps(run_check([str(REPO_ROOT / p) for p in paths]).as_dict()), encoding="utf-8")
    return out


def test_create_then_update_one_comment(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = _report_file(tmp_path, "first.json", ["budgets"])
    second = _report_file(tmp_path, "second.json", ["budgets", "tests/examples/overpromised.yaml"])
    with FakeGitHub() as gh:
        env = _env(tmp_path, gh.port)
        assert pr_comment.main(["--report", str(first)], env) == 0
        assert "created the PR comment 1001 on #7" in capsys.readouterr().out
        assert pr_comment.main(["--report", str(second)], env) == 0
        assert "updated the PR comment 1001 on #7" in capsys.readouterr().out
    assert not gh.errors, gh.errors
    assert not gh.expected, f"{len(gh.expected)} recorded requests were never made"
    writes = [s for s in gh.seen if s["method"] in ("POST", "PATCH")]
    assert [w["method"] for w in writes] == ["POST", "PATCH"]  # one comment: made once, then edited
    mark = "<!-- budgetlint:pr-comment workflow=Budgets -->"
    assert all(w["body"]["body"].startswith(mark + "\n") for w in writes)
    assert "overpromised" not in writes[0]["body"]["body"] and "❌" in writes[1]["body"]["body"]
    assert all(len(w["body"]["body"]) <= COMMENT_LIMIT for w in writes)


def test_a_refused_comment_warns_and_does_not_fail(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = _report_file(tmp_path, "r.json", ["budgets"])
    env = _env(tmp_path, 9)  # nothing listens on port 9 of 127.0.0.1 (discard): the request fails
    assert pr_comment.main(["--report", str(report)], env) == 0
    out = capsys.readouterr().out
    assert out.startswith("::warning title=budgetlint::the PR comment was not posted")


def test_not_a_pull_request_posts_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    event = tmp_path / "push.json"
    event.write_text(json.dumps({"ref": "refs/heads/main"}))
    env = {"GITHUB_TOKEN": TOKEN, "GITHUB_REPOSITORY": "acme/budgets", "GITHUB_EVENT_PATH": str(event)}
    assert pr_comment.main(["--report", str(tmp_path / "absent.json")], env) == 0
    assert "not a pull request" in capsys.readouterr().out


def test_marker_is_one_hidden_line_whatever_the_workflow_name() -> None:
    m = pr_comment.marker("Budgets --> <script>\nx")
    assert m.startswith("<!-- ") and m.endswith(" -->") and m.count("-->") == 1 and "\n" not in m
    assert pr_comment.marker("A") != pr_comment.marker("B") != pr_comment.marker("B", "gpu")


def _budget(name: str, est: float, verdict: str, promise: float = 0.4) -> BudgetResult:
    return BudgetResult(name, "b.yaml", 1, "@o", "p95", promises={"ttft_s": promise},
                        analysis={"realistic_ttft_s": est, "headroom_ttft": promise / est - 1},
                        verdicts={"ttft": verdict})


def test_comment_shows_before_and_after_failures_first_and_folds_the_met() -> None:
    base = Report(files=["b.yaml"], budgets=[_budget("chat", 0.30, "met"), _budget("search", 0.20, "met"),
                                             _budget("voice", 0.35, "met"), _budget("steady", 0.1, "met")])
    head = Report(files=["b.yaml"], budgets=[_budget("chat", 0.50, "cannot-be-met"), _budget("search", 0.10, "met"),
                                             _budget("voice", 0.45, "at-risk"), _budget("steady", 0.1, "met")])
    data = head.as_dict()
    data["diff"] = compare(base, head, ref="main")
    body = render_comment(data, "<!-- m -->")
    lines = body.splitlines()
    assert lines[0] == "<!-- m -->"
    changed = [line for line in lines if line.startswith("| ") and "→" in line]
    # 400 ms promised; chat's estimate 300 -> 500 ms: headroom 400/300-1 = +33 % -> 400/500-1 = -20 %
    assert changed[0] == "| chat | ttft 400 ms | 300 ms | 500 ms | +33% → -20% | ✅ met → ❌ cannot be met |"
    assert changed[1].startswith("| voice | ttft 400 ms | 350 ms | 450 ms |") and "⚠️ at risk" in changed[1]
    assert changed[2].startswith("| search | ttft 400 ms | 200 ms | 100 ms |")  # better: shown, last
    fold = body.index("<details><summary>2 budgets with every promise met</summary>")
    assert body.index("| chat |") < body.index("| voice |") < fold < body.index("| steady |")
    assert body.index("</details>") > body.index("| steady |")


def test_a_huge_report_fits_in_one_comment() -> None:
    head = Report(files=["b.yaml"], budgets=[_budget(f"b{i:05}", 0.3, "met") for i in range(5000)])
    body = render_comment(head.as_dict(), "<!-- m -->")
    assert len(body) <= COMMENT_LIMIT and body.rstrip().endswith("have everything.")
    assert body.count("<details>") == body.count("</details>") == 1
