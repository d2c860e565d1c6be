"""Key-gated sources (Scopus, IEEE Xplore): the targets of issue #13, on the simulator.

    python bench/keyed.py alone            # each keyed source alone on its labelled set
    python bench/keyed.py budget           # IEEE daily quota smaller than the set needs
    python bench/keyed.py with-keys --sets gen hallmark-dev_public
    python bench/keyed.py no-keys          # nothing is sent to either service

Every scenario starts its own simulator (`realistic` unless --config says
otherwise) with a request log, so request counts are the simulator's, not
refaudit's own. The simulator accepts any key but "invalid".
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from accuracy import PUBLIC, prediction, score
from simulator import SHARED, refaudit_settings, start_simulator

from refaudit.sources import registry

# The simulator takes any key but "invalid".
KEYS = {e.key_env[0]: f"bench-{e.name}-key" for e in registry.SOURCES if e.requires_key}
KEYED = tuple(e.name for e in registry.SOURCES if e.requires_key)
SETS = {
    "keyed-scopus": "keyed-scopus.bib",
    "keyed-ieee": "keyed-ieee.bib",
    "gen": "gen.bib",
    "hallmark-dev_public": "hallmark-dev_public.bib",
}


def _logged(log: Path) -> list[dict]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


class Recording(httpx.AsyncHTTPTransport):
    """The real transport, noting when each request left and its answer came back."""

    def __init__(self) -> None:
        super().__init__()
        self.exchanges: list[dict] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        sent = time.monotonic()
        response = await super().handle_async_request(request)
        self.exchanges.append(
            {
                "host_path": request.url.path,
                "sent": sent,
                "answered": time.monotonic(),
                "status": response.status_code,
                "detail": response.headers.get("x-error-detail-header"),
            }
        )
        return response


def _audit(
    name: str, settings: object, sources: list[str] | None, transport: Recording | None = None
) -> tuple[list, dict]:
    from refaudit.audit import audit_paths

    if sources is not None:
        settings.sources = sources  # type: ignore[attr-defined]
    started = time.monotonic()
    run = audit_paths([PUBLIC / SETS[name]], settings, all_entries=True, transport=transport)  # type: ignore[arg-type]
    report = asyncio.run(run)
    return report.results, {
        "seconds": round(time.monotonic() - started, 1),
        "requests": dict(report.stats.requests),
    }


def _scores(name: str, results: list) -> dict:
    labels = json.loads((PUBLIC / f"{name}.labels.json").read_text())["labels"]
    scores = score(labels, {r.reference.key: prediction(r) for r in results})
    keep = ("count", "detection_rate", "false_positive_rate", "coverage")
    return {key: scores[key] for key in keep}


def _settings(url: str, folder: str, config: str, keys: bool) -> object:
    for variable, value in KEYS.items():
        if keys:
            os.environ[variable] = value
        else:
            os.environ.pop(variable, None)
    return refaudit_settings(url, folder, config)


def alone(config: str) -> dict:
    """Each keyed source alone on the set drawn from what it indexes."""
    out = {}
    for name, source in (("keyed-scopus", "scopus"), ("keyed-ieee", "ieee")):
        with tempfile.TemporaryDirectory() as folder:
            log = Path(folder) / "requests.jsonl"
            process, url = start_simulator(config, log)
            try:
                settings = _settings(url, folder, config, keys=True)
                results, cost = _audit(name, settings, [source])
            finally:
                process.terminate()
                process.wait(timeout=10)
            unverified = collections.Counter(
                r.reason for r in results if r.verdict.value == "unverified"
            )
            out[f"{name} --sources {source}"] = {
                **_scores(name, results),
                **cost,
                "simulator_requests": collections.Counter(e["source"] for e in _logged(log)),
                "unverified_reasons": dict(unverified),
            }
    return out


def budget(config: str, quota: int) -> dict:
    """A daily IEEE quota smaller than keyed-ieee needs: what happens, and on a second run."""
    with tempfile.TemporaryDirectory() as folder:
        sim_config = Path(folder) / "sim.json"
        base = json.loads((SHARED / "scholarsim" / "configs" / f"{config}.json").read_text())
        base.setdefault("sources", {}).setdefault("ieee", {})["daily_quota"] = quota
        base["rate_limits"] = True
        sim_config.write_text(json.dumps(base))
        log = Path(folder) / "requests.jsonl"
        process, url = start_simulator(str(sim_config), log)
        runs = []
        try:
            for run in (1, 2):
                before = len(_logged(log))
                settings = _settings(url, folder, config, keys=True)
                recording = Recording()
                results, cost = _audit("keyed-ieee", settings, ["ieee"], recording)
                sent = [e for e in _logged(log)[before:] if e["source"] == "ieee"]
                refused = [e for e in sent if e.get("limited") == "quota"]
                # Timed on refaudit's side: requests that left after the first over-quota answer.
                over = [x for x in recording.exchanges if x["detail"] == "Account Over Rate Limit"]
                first_refusal = min((x["answered"] for x in over), default=None)
                after_first_refusal = sum(
                    1
                    for x in recording.exchanges
                    if first_refusal is not None and x["sent"] > first_refusal
                )
                verdicts = collections.Counter(r.verdict.value for r in results)
                # An unverified reference must carry no error: nothing answered about it.
                errors_while_unverified = collections.Counter(
                    f.code
                    for r in results
                    if r.verdict.value == "unverified"
                    for f in r.findings
                    if f.severity == "error"
                )
                reasons = collections.Counter(
                    status.reason
                    for r in results
                    if r.verdict.value == "unverified"
                    for status in r.sources.values()
                    if status.state == "failed"
                )
                runs.append(
                    {
                        "run": run,
                        "ieee_requests_sent": len(sent),
                        "refused_for_quota": len(refused),
                        "sent_after_first_refusal": after_first_refusal,
                        "verdicts": dict(verdicts),
                        "not_found": verdicts.get("not_found", 0),
                        "errors_on_unverified": dict(errors_while_unverified),
                        "unverified_reasons": dict(reasons),
                        **cost,
                    }
                )
        finally:
            process.terminate()
            process.wait(timeout=10)
    return {"daily_quota": quota, "references": sum(runs[0]["verdicts"].values()), "runs": runs}


def with_keys(config: str, sets: list[str]) -> dict:
    """Every source, with and without both keys: accuracy and request counts side by side."""
    out = {}
    for name in sets:
        row = {}
        for keys in (False, True):
            with tempfile.TemporaryDirectory() as folder:
                log = Path(folder) / "requests.jsonl"
                process, url = start_simulator(config, log)
                try:
                    settings = _settings(url, folder, config, keys=keys)
                    results, cost = _audit(name, settings, None)
                finally:
                    process.terminate()
                    process.wait(timeout=10)
                sent = collections.Counter(e["source"] for e in _logged(log))
                row["with keys" if keys else "without keys"] = {
                    **_scores(name, results),
                    **cost,
                    "simulator_requests": sum(sent.values()),
                    "keyed_requests": {s: sent.get(s, 0) for s in KEYED},
                }
        without, keyed = row["without keys"], row["with keys"]
        row["extra_requests"] = round(
            keyed["simulator_requests"] / max(1, without["simulator_requests"]) - 1, 4
        )
        out[name] = row
    return out


def no_keys(config: str) -> dict:
    """Without keys nothing goes to Scopus or IEEE; `refaudit sources` says how to enable them."""
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "requests.jsonl"
        process, url = start_simulator(config, log)
        try:
            settings = _settings(url, folder, config, keys=False)
            _audit("keyed-ieee", settings, None)
            shown = subprocess.run(
                [sys.executable, "-m", "refaudit", "sources"],
                capture_output=True,
                text=True,
                check=True,
                env={**os.environ, "COLUMNS": "120"},
            ).stdout
        finally:
            process.terminate()
            process.wait(timeout=10)
        sent = collections.Counter(e["source"] for e in _logged(log))
    return {
        "keyed_requests": {s: sent.get(s, 0) for s in KEYED},
        "all_requests": sum(sent.values()),
        "sources_says": [line for line in shown.splitlines() if line.startswith(KEYED)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("scenario", choices=["alone", "budget", "with-keys", "no-keys"])
    parser.add_argument("--config", default="realistic", help="scholarsim config name")
    parser.add_argument(
        "--sets", nargs="*", default=["gen"], choices=["gen", "hallmark-dev_public"]
    )
    parser.add_argument("--quota", type=int, default=40, help="IEEE daily quota for `budget`")
    args = parser.parse_args()
    if not PUBLIC.exists():
        raise SystemExit(f"{PUBLIC} not found: the benchmark needs ../shared")
    if args.scenario == "alone":
        result = alone(args.config)
    elif args.scenario == "budget":
        result = budget(args.config, args.quota)
    elif args.scenario == "with-keys":
        result = with_keys(args.config, args.sets)
    else:
        result = no_keys(args.config)
    print(json.dumps(result, indent=2, default=dict))


if __name__ == "__main__":
    main()
