"""A .tex inside a project never makes refaudit open a file outside the project's folder."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import IO

import pytest

from refaudit.errors import InputError
from refaudit.parsing import files, parse_file

ENTRY = "@article{secret, title = {Outside the project}, year = 2020}\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """tmp/project/ holds the paper; tmp/outside.bib and tmp/elsewhere/ are not the project's."""
    (tmp_path / "project").mkdir()
    (tmp_path / "outside.bib").write_text(ENTRY)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "refs.bib").write_text(ENTRY)
    (tmp_path / "project" / "local.bib").write_text("@article{local, title = {Inside}}\n")
    return tmp_path / "project"


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every file the parser opens, resolved (whole or a line at a time)."""
    paths: list[Path] = []
    real = files._open_regular

    def spy(path: Path) -> contextlib.AbstractContextManager[IO[bytes]]:
        paths.append(Path(path).resolve())
        return real(path)

    monkeypatch.setattr(files, "_open_regular", spy)
    return paths


def _paper(project: Path, body: str) -> Path:
    paper = project / "paper.tex"
    paper.write_text(body + "\n\\bibliography{local}\n\\cite{secret,local}\n")
    return paper


@pytest.mark.parametrize(
    "command",
    [
        "\\bibliography{../outside}",
        "\\addbibresource{../outside.bib}",
        "\\bibliography{../elsewhere/refs}",
        "\\addbibresource{{ABSOLUTE}}",
        "\\bibliography{/etc/passwd}",
    ],
)
def test_bibliography_files_outside_the_folder_are_refused(
    project: Path, opened: list[Path], command: str
) -> None:
    command = command.replace("{ABSOLUTE}", str(project.parent / "outside.bib"))
    bibliography = parse_file(_paper(project, command))
    assert [reference.key for reference in bibliography.references] == ["local"]
    assert all(path.is_relative_to(project.resolve()) for path in opened)
    refused = [p for p in bibliography.problems if p.code == "bib-outside-folder"]
    assert refused and refused[0].severity == "error" and refused[0].line == 1


def test_a_paper_whose_only_bibliography_lies_outside_says_so(
    project: Path, opened: list[Path]
) -> None:
    """Refused, the file is the reason nothing was found: not "no \\bibliography"."""
    paper = project / "paper.tex"
    paper.write_text("\\cite{secret}\n\\bibliography{../outside}\n")
    with pytest.raises(InputError) as refused:
        parse_file(paper)
    assert "outside the document's folder" in str(refused.value)
    assert all(path.is_relative_to(project.resolve()) for path in opened)


def test_a_symlink_inside_the_folder_leading_out_is_refused(
    project: Path, opened: list[Path]
) -> None:
    (project / "linked.bib").symlink_to(project.parent / "outside.bib")
    bibliography = parse_file(_paper(project, "\\addbibresource{linked.bib}"))
    assert "secret" not in [reference.key for reference in bibliography.references]
    assert all(path.is_relative_to(project.resolve()) for path in opened)
    assert any(p.code == "bib-outside-folder" for p in bibliography.problems)


def test_an_input_leading_out_is_refused_before_anything_outside_is_touched(
    project: Path, opened: list[Path]
) -> None:
    (project.parent / "chapter.tex").write_text("\\bibliography{../outside}\n")
    bibliography = parse_file(_paper(project, "\\input{../chapter}"))
    assert all(path.is_relative_to(project.resolve()) for path in opened)
    assert any(p.code == "input-outside-folder" for p in bibliography.problems)


def test_a_compiled_bbl_linked_from_outside_is_not_read(project: Path, opened: list[Path]) -> None:
    (project.parent / "other.bbl").write_text(
        "\\begin{thebibliography}{1}\\bibitem{x} A. B. Title. 2020.\\end{thebibliography}"
    )
    (project / "paper.bbl").symlink_to(project.parent / "other.bbl")
    paper = project / "paper.tex"
    paper.write_text("\\bibliography{missing}\n\\cite{x}\n")
    with pytest.raises(InputError):
        parse_file(paper)
    assert all(path.is_relative_to(project.resolve()) for path in opened)


def test_bibliographies_in_subfolders_are_still_read(project: Path) -> None:
    (project / "bib").mkdir()
    (project / "bib" / "more.bib").write_text("@article{more, title = {Sub}}\n")
    paper = project / "paper.tex"
    paper.write_text("\\addbibresource{bib/more.bib}\n\\bibliography{local}\n\\cite{more,local}\n")
    assert {reference.key for reference in parse_file(paper).references} == {"more", "local"}


@pytest.mark.anyio
async def test_an_mcp_root_holds_for_every_file_a_tex_names(
    tmp_path: Path, opened: list[Path]
) -> None:
    from tests.test_server import connected, settings_for, structured, upstreams

    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "secrets.bib").write_text(ENTRY)
    (root / "linked.bib").symlink_to(tmp_path / "secrets.bib")
    (root / "local.bib").write_text("@article{local, title = {Inside}}\n")
    (root / "paper.tex").write_text(
        "\\bibliography{../secrets,local}\n"
        f"\\addbibresource{{{tmp_path / 'secrets.bib'}}}\n"
        "\\addbibresource{linked.bib}\n\\input{../outside}\n\\cite{secret,local}\n"
    )
    async with connected(settings_for(), upstreams(), root=root) as client:
        audit = structured(await client.call_tool("verify_bibliography", {"path": "paper.tex"}))

    assert [entry["key"] for entry in audit["results"]] == ["local"]
    assert opened and all(path.is_relative_to(root.resolve()) for path in opened)
    refused = [p for p in audit["problems"] if p["code"] == "bib-outside-folder"]
    assert len(refused) == 3
