"""Neovim, headless, runs `refaudit lsp` on a .bib file with a fabricated entry and reports
the diagnostics it received (Debian's `neovim`, which `.ci/run` installs).

The script uses `vim.lsp.start_client` and `vim.lsp.buf_attach_client`, which every
Neovim from 0.7 has (Debian 12 ships 0.7.2; `vim.lsp.start` came in 0.8).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_lsp import REFS
from tests.test_serve_transports import served_over_http, server_environment
from tests.test_server import WIDGETS, upstreams

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = """
local out = vim.env.REFAUDIT_TEST_OUT
local client = vim.lsp.start_client({
  name = "refaudit",
  cmd = { vim.env.REFAUDIT_TEST_PYTHON, "-m", "refaudit", "lsp" },
  root_dir = vim.fn.getcwd(),
  init_options = { texlab = true },
})
vim.lsp.buf_attach_client(0, client)
local done = vim.wait(150000, function() return #vim.diagnostic.get(0) > 0 end, 200)
local found = {}
for _, d in ipairs(vim.diagnostic.get(0)) do
  table.insert(found, { lnum = d.lnum, end_lnum = d.end_lnum, severity = d.severity,
                        code = d.code, source = d.source, message = d.message })
end
vim.fn.writefile({ vim.fn.json_encode({ done = done, diagnostics = found }) }, out)
vim.lsp.stop_client(client)
vim.cmd("qa!")
"""


def test_neovim_shows_the_fabricated_entry(tmp_path: Path) -> None:
    nvim = shutil.which("nvim")
    if nvim is None:
        pytest.skip("Neovim is not installed (Debian's `neovim`; .ci/run installs it)")
    (tmp_path / "refs.bib").write_text(REFS, encoding="utf-8")
    (tmp_path / "check.lua").write_text(SCRIPT, encoding="utf-8")
    out = tmp_path / "diagnostics.json"
    with served_over_http(upstreams(WIDGETS)) as upstream:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("REFAUDIT_")},
            **server_environment(tmp_path, upstream),
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
            "REFAUDIT_TEST_PYTHON": sys.executable,
            "REFAUDIT_TEST_OUT": str(out),
            "HOME": str(tmp_path),
        }
        done = subprocess.run(
            [nvim, "--headless", "--clean", "refs.bib", "-c", "luafile check.lua"],
            cwd=tmp_path,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
    assert out.is_file(), done.stdout + done.stderr
    received = json.loads(out.read_text(encoding="utf-8"))
    assert received["done"] is True
    by_code = {d["code"]: d for d in received["diagnostics"]}
    assert set(by_code) == {"year-mismatch", "not-found"}
    fabricated = by_code["not-found"]
    assert (fabricated["lnum"], fabricated["end_lnum"]) == (9, 14)
    assert fabricated["severity"] == 1  # vim.diagnostic.severity.ERROR
    assert fabricated["source"] == "refaudit"
    assert fabricated["message"].startswith("smith2021quantum: ")
