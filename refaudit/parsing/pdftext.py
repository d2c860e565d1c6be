"""The text lines of a PDF with their positions, read by pdfminer.six in a bounded child process.

pdfminer decompresses a whole stream in memory, follows object references as deep as
a file nests them and walks every page a file claims: a hostile PDF (a deflate bomb,
100,000 pages, objects nested thousands deep, a broken cross-reference table) could
hold it for minutes or exhaust memory. The reading therefore runs in a child process
with its own address-space and CPU limits and a wall-clock budget, and whatever goes
wrong there comes back as one `InputError` naming the file, never a traceback or a hang.

The child prints one JSON object per text line, then one status object; the parent
keeps only the lines (page, position, font size, text), which is all the reference
list reader needs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from refaudit.errors import InputError

#: Far beyond a paper with figures; a larger file is not a manuscript.
MAX_PDF_BYTES = 100 * 1024 * 1024
#: Text lines handed back at most (a 2,000-page book prints about 100,000).
_MAX_LINES = 400_000


@dataclass(frozen=True)
class PdfLimits:
    """What reading one PDF may cost before it is refused."""

    #: a thesis has a few hundred pages; the count a file claims is checked first
    pages: int = 2000
    #: wall-clock seconds (a 500-reference paper takes about a second)
    seconds: float = 120.0
    #: address space of the reading process
    memory_bytes: int = 2 * 1024 * 1024 * 1024


_OCR_HINT = "run OCR first, e.g. `ocrmypdf paper.pdf paper-ocr.pdf`, and check the result"


@dataclass(frozen=True, slots=True)
class TextLine:
    """One line of text as printed: page (1-based), left/right edge and baseline in
    points from the page's lower-left corner, font size, and the page's width and height."""

    page: int
    x0: float
    x1: float
    y: float
    size: float
    text: str
    width: float
    height: float


def read_lines(path: Path, limits: PdfLimits | None = None) -> list[TextLine]:
    """Every text line of the PDF at `path`, page by page.

    Raises:
        InputError: not a PDF, too large, encrypted, without a text layer (a scan), or
            refused by the bounds above (too many pages, too slow, too much memory).
    """
    path = Path(path)
    limits = limits or PdfLimits()
    _check_file(path)
    bounds = f"{limits.pages},{limits.seconds},{limits.memory_bytes}"
    command = [sys.executable, "-m", "refaudit.parsing.pdftext", str(path), bounds]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            timeout=limits.seconds,
            env=environment,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise _refused(path, f"reading took longer than {limits.seconds:g} s; not read") from None
    output = done.stdout.decode("utf-8", errors="replace").splitlines()
    status = _status(output[-1] if output else "")
    if status is None:
        raise _refused(path, _crash_message(done.returncode, limits))
    if status.get("error"):
        raise _refused(path, str(status["error"]), hint=status.get("hint"))
    lines = [_line(row) for row in output[:-1]]
    if not any(line.text.strip() for line in lines):
        raise _refused(path, "no text layer (a scanned PDF?); nothing to read", hint=_OCR_HINT)
    return lines


def _check_file(path: Path) -> None:
    try:
        info = path.stat()
    except FileNotFoundError:
        raise InputError("file not found", file=str(path)) from None
    except OSError as error:
        raise InputError(f"cannot read file: {error.strerror or error}", file=str(path)) from None
    if not path.is_file():
        raise InputError("not a regular file; not read", file=str(path))
    if info.st_size > MAX_PDF_BYTES:
        raise _refused(path, f"larger than {MAX_PDF_BYTES // (1024 * 1024)} MB; not read")
    with path.open("rb") as stream:
        head = stream.read(1024)
    if b"%PDF-" not in head:
        raise _refused(path, "not a PDF (no %PDF- header)")


def _refused(path: Path, message: str, hint: str | None = None) -> InputError:
    return InputError(message, file=str(path), hint=hint)


def _crash_message(returncode: int, limits: PdfLimits) -> str:
    """What a child that printed no status ran into."""
    if returncode in (-9, -24, 137, 152):  # SIGKILL / SIGXCPU
        return f"reading needed more than {limits.seconds:g} s of CPU; not read"
    return "the PDF could not be read (its structure is damaged or too complex)"


def _status(row: str) -> dict[str, str] | None:
    try:
        value = json.loads(row)
    except ValueError:
        return None
    return value if isinstance(value, dict) and "status" in value else None


def _line(row: str) -> TextLine:
    page, x0, x1, y, size, width, height, text = json.loads(row)
    return TextLine(int(page), x0, x1, y, size, str(text), width, height)


# --- the child ---------------------------------------------------------------


def _limit_resources(limits: PdfLimits) -> None:
    """Cap this process's memory and CPU time (where the platform lets us)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX: the wall-clock budget still holds
        return
    caps = ((resource.RLIMIT_AS, limits.memory_bytes), (resource.RLIMIT_CPU, int(limits.seconds)))
    for limit, value in caps:
        soft, hard = resource.getrlimit(limit)
        cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
        if soft == resource.RLIM_INFINITY or soft > cap:
            resource.setrlimit(limit, (cap, hard))


def _emit(status: dict[str, object]) -> None:
    sys.stdout.write(json.dumps({"status": "error" if status.get("error") else "ok", **status}))
    sys.stdout.write("\n")


def _extract(path: str, limits: PdfLimits) -> None:
    """Print every text line of `path`, then a status line."""
    from pdfminer.converter import PDFPageAggregator
    from pdfminer.layout import LAParams, LTChar, LTTextContainer, LTTextLineHorizontal
    from pdfminer.pdfdocument import PDFDocument, PDFEncryptionError, PDFPasswordIncorrect
    from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager
    from pdfminer.pdfpage import PDFPage
    from pdfminer.pdfparser import PDFParser
    from pdfminer.pdftypes import resolve1

    with open(path, "rb") as stream:
        try:
            document = PDFDocument(PDFParser(stream))
        except (PDFPasswordIncorrect, PDFEncryptionError):
            _emit(
                {
                    "error": "encrypted PDF; it cannot be read without its password",
                    "hint": "save a copy without the password (e.g. `qpdf --decrypt "
                    "--password=PASSWORD paper.pdf open.pdf`) and check that",
                }
            )
            return
        pages = resolve1(resolve1(document.catalog.get("Pages")) or {})
        claimed = resolve1(pages.get("Count")) if isinstance(pages, dict) else None
        if isinstance(claimed, int) and claimed > limits.pages:
            _emit({"error": f"{claimed} pages, more than {limits.pages}; not read"})
            return
        manager = PDFResourceManager(caching=True)
        device = PDFPageAggregator(manager, laparams=LAParams(boxes_flow=None))
        interpreter = PDFPageInterpreter(manager, device)
        out = sys.stdout
        count = lines = 0
        for number, page in enumerate(PDFPage.create_pages(document), 1):
            if number > limits.pages:
                _emit({"error": f"more than {limits.pages} pages; not read"})
                return
            interpreter.process_page(page)
            layout = device.get_result()
            width, height = layout.width, layout.height
            for box in layout:
                if not isinstance(box, LTTextContainer):
                    continue
                for line in box:
                    if not isinstance(line, LTTextLineHorizontal):
                        continue
                    chars = [char for char in line if isinstance(char, LTChar)]
                    text = line.get_text().rstrip("\n")
                    if not chars or not text.strip():
                        continue
                    size = sorted(char.size for char in chars)[len(chars) // 2]
                    row = [number, line.x0, line.x1, chars[0].y0, size, width, height, text]
                    out.write(json.dumps([round(v, 2) if isinstance(v, float) else v for v in row]))
                    out.write("\n")
                    lines += 1
                    if lines > _MAX_LINES:
                        _emit({"error": f"more than {_MAX_LINES} lines of text; not read"})
                        return
            count = number
    _emit({"pages": count})


def _main(argv: list[str]) -> int:
    pages, seconds, memory = argv[2].split(",")
    limits = PdfLimits(int(pages), float(seconds), int(memory))
    _limit_resources(limits)
    try:
        _extract(argv[1], limits)
    except MemoryError:
        gigabytes = limits.memory_bytes / (1 << 30)
        _emit({"error": f"reading needed more than {gigabytes:g} GB of memory; not read"})
    except RecursionError:
        _emit({"error": "objects nested too deeply; not read"})
    except Exception as error:  # any pdfminer failure is a damaged file
        name = type(error).__name__
        _emit({"error": f"the PDF could not be read ({name}: {str(error)[:120]})"})
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv))
