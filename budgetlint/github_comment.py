"""Post or update the sticky pull-request comment (the Action's ``comment: true``).

    python -m budgetlint.github_comment --report report.json

reads the JSON report, renders the comment (:mod:`budgetlint.reporters.pr_comment`)
and, through GitHub's REST API, edits the comment this workflow posted on the
pull request before (found by a hidden marker naming the workflow) or, on
the first run, creates it: one comment per workflow, updated in place.

From the environment GitHub Actions sets: ``GITHUB_TOKEN`` (the Action passes
its ``github-token`` input, which needs ``pull-requests: write``),
``GITHUB_API_URL``, ``GITHUB_REPOSITORY``, ``GITHUB_EVENT_PATH`` (the pull
request's number) and ``GITHUB_WORKFLOW`` (the marker). Outside a pull
request it does nothing. A comment that cannot be posted (a fork's
read-only token, an API error) is a ``::warning``, never a failed check: the
comment is a convenience, the check is the job summary and the exit code.
Standard library only (``urllib``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any

#: pages of 100 comments read at most while looking for our comment
MAX_PAGES = 50
TIMEOUT_S = 30
API_VERSION = "2022-11-28"


class CommentError(Exception):
    """The GitHub API refused or failed a request."""


def marker(workflow: str, key: str = "") -> str:
    """The hidden HTML comment that identifies this workflow's comment."""
    name = re.sub(r"[^\w .:/@+-]", "_", workflow or "workflow")[:200]
    if key:
        name += " / " + re.sub(r"[^\w .:/@+-]", "_", key)[:100]
    return f"<!-- budgetlint:pr-comment workflow={name} -->"


def pull_request_number(event: Mapping[str, Any]) -> int | None:
    pr = event.get("pull_request") or {}
    number = pr.get("number", event.get("number") if "pull_request" in event else None)
    return number if isinstance(number, int) and not isinstance(number, bool) else None


class GitHub:
    """The few REST calls the comment needs."""

    def __init__(self, api_url: str, repository: str, token: str) -> None:
        self.api = api_url.rstrip("/")
        self.repository = repository
        self.token = token

    def request(self, method: str, path: str, body: dict | None = None) -> tuple[Any, dict[str, str]]:
        url = path if path.startswith(("http://", "https://")) else f"{self.api}{path}"
        data = json.dumps(body).encode("utf-8") if body is not None else None
        req = urllib.request.Request(url, data=data, method=method, headers={
            "Accept": "application/vnd.github+json",
            "Authorization": f"Bearer {self.token}",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": "budgetlint-pr-comment",
            **({"Content-Type": "application/json"} if data is not None else {}),
        })
        try:
            with urllib.request.urlopen(req, timeout=TIMEOUT_S) as resp:  # noqa: S310 (https or the test's server)
                raw = resp.read()
                headers = {k.lower(): v for k, v in resp.headers.items()}
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")[:300]
            raise CommentError(f"{method} {path}: HTTP {exc.code} {detail}".strip()) from None
        except (urllib.error.URLError, OSError) as exc:
            raise CommentError(f"{method} {path}: {getattr(exc, 'reason', exc)}") from None
        try:
            return (json.loads(raw) if raw else None), headers
        except ValueError:
            raise CommentError(f"{method} {path}: the answer is not JSON") from None

    def find_comment(self, number: int, mark: str) -> int | None:
        """The id of the first comment on the pull request whose body starts with ``mark``."""
        path: str | None = f"/repos/{self.repository}/issues/{number}/comments?per_page=100"
        for _ in range(MAX_PAGES):
            if path is None:
                break
            comments, headers = self.request("GET", path)
            for c in comments or []:
                if isinstance(c, dict) and str(c.get("body") or "").startswith(mark):
                    return int(c["id"])
            path = _next_link(headers.get("link", ""))
        return None

    def upsert(self, number: int, mark: str, body: str) -> tuple[str, int]:
        """Edit our comment, or create it: ("updated" | "created", its id)."""
        found = self.find_comment(number, mark)
        if found is not None:
            self.request("PATCH", f"/repos/{self.repository}/issues/comments/{found}", {"body": body})
            return "updated", found
        made, _ = self.request("POST", f"/repos/{self.repository}/issues/{number}/comments", {"body": body})
        return "created", int((made or {}).get("id") or 0)


def _next_link(link: str) -> str | None:
    for part in link.split(","):
        m = re.match(r'\s*<([^>]+)>\s*;\s*rel="next"', part)
        if m:
            return m.group(1)
    return None


def _warn(message: str) -> None:
    print(f"::warning title=budgetlint::{message.replace('%', '%25').replace(chr(10), '%0A')}")


def main(argv: list[str] | None = None, env: Mapping[str, str] = os.environ) -> int:
    parser = argparse.ArgumentParser(prog="python -m budgetlint.github_comment",
                                     description="Post or update budgetlint's sticky pull-request comment.")
    parser.add_argument("--report", required=True, help="the JSON report (budgetlint check --format json)")
    parser.add_argument("--key", default="", help="told apart from the workflow's other comments (a matrix job)")
    args = parser.parse_args(argv)

    from budgetlint.reporters.pr_comment import render_comment

    event_path = env.get("GITHUB_EVENT_PATH", "")
    try:
        with open(event_path, encoding="utf-8") as fh:
            event = json.load(fh)
    except (OSError, ValueError):
        event = {}
    number = pull_request_number(event) if isinstance(event, dict) else None
    if number is None:
        print("budgetlint: not a pull request: no comment posted")
        return 0
    token, repository = env.get("GITHUB_TOKEN", ""), env.get("GITHUB_REPOSITORY", "")
    if not token or not repository:
        _warn("the PR comment needs GITHUB_TOKEN and GITHUB_REPOSITORY: no comment posted")
        return 0
    try:
        with open(args.report, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:
        _warn(f"cannot read the report {args.report}: {exc}: no comment posted")
        return 0
    mark = marker(env.get("GITHUB_WORKFLOW", ""), args.key)
    body = render_comment(data if isinstance(data, dict) else {}, mark)
    try:
        done, cid = GitHub(env.get("GITHUB_API_URL", "https://api.github.com"), repository, token).upsert(
            number, mark, body)
    except CommentError as exc:
        _warn(f"the PR comment was not posted ({exc}); a pull request from a fork gets a read-only token, and "
              "the workflow needs `permissions: pull-requests: write`")
        return 0
    print(f"budgetlint: {done} the PR comment {cid} on #{number}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
