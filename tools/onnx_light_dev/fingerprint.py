"""C++ source normalization: family fingerprints and ParallelFor call sites.

A fingerprint says "this is the implementation a reviewer looked at". It must not change
when only comments or whitespace change (re-indenting, re-wrapping, clang-format), nor
when the manifest lists files in another order, but must change with any token of code
or any character of a literal.
"""

import hashlib
import re

FINGERPRINT_PREFIX = "sha256:"
FINGERPRINT_PATTERN = re.compile(r"^sha256:[0-9a-f]{64}$")

_RAW_STRING_START = re.compile(r'R"([^()\\\s]{0,16})\(')
_CALL_SITE = re.compile(r"\b(ParallelFor|ParallelForWithParticipant)\s*\(")


def _segments(text: str) -> list[tuple[str, str]]:
    """Splits C++ source into ("code", s) and ("literal", s) segments, dropping comments.

    A comment becomes one space in the code (plus the newlines it spanned, so that line
    numbers survive). Literals: "...", '...' and raw strings R"d(...)d".
    """
    segments = []
    code = []
    i, n = 0, len(text)

    def flush() -> None:
        if code:
            segments.append(("code", "".join(code)))
            code.clear()

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            code.append(" ")
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            code.append(" " + "\n" * text.count("\n", i, end))
            i = end
        elif c == "R" and (i == 0 or not _is_word(text[i - 1])) and _RAW_STRING_START.match(text, i):
            m = _RAW_STRING_START.match(text, i)
            close = ")" + m.group(1) + '"'
            end = text.find(close, m.end())
            end = n if end < 0 else end + len(close)
            flush()
            segments.append(("literal", text[i:end]))
            i = end
        elif c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):  # 1'000 is a digit separator
            end = _literal_end(text, i)
            flush()
            segments.append(("literal", text[i:end]))
            i = end
        else:
            code.append(c)
            i += 1
    flush()
    return segments


def _is_word(c: str) -> bool:
    return c != "" and (c.isalnum() or c == "_")


def _literal_end(text: str, start: int) -> int:
    quote = text[start]
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == quote or text[i] == "\n":  # an unterminated literal ends at its line
            return i + 1
        else:
            i += 1
    return len(text)


# Characters that may form a longer token with a neighbour ("- -x" is not "--x").
_OPERATOR_CHARS = frozenset("+-*/%<>=&|^!:.")


def _squeeze(code: str, before: str, after: str) -> str:
    """Whitespace in code: a space only where it separates two words or two operator
    characters; nowhere else (so "f (a, b)" and "f(a,b)" normalize alike)."""
    code = re.sub(r"\s+", " ", code)
    out = []
    for i, c in enumerate(code):
        if c == " ":
            left = code[i - 1] if i else before
            right = code[i + 1] if i + 1 < len(code) else after
            if not ((_is_word(left) and _is_word(right)) or (left in _OPERATOR_CHARS and right in _OPERATOR_CHARS)):
                continue
        out.append(c)
    return "".join(out)


def normalize_source(text: str) -> str:
    """Code without comments and without insignificant whitespace; literals unchanged."""
    segments = _segments(text)
    out = []
    for i, (kind, s) in enumerate(segments):
        if kind == "literal":
            out.append(s)
        else:
            before = segments[i - 1][1][-1:] if i else ""
            after = segments[i + 1][1][:1] if i + 1 < len(segments) else ""
            out.append(_squeeze(s, before, after))
    return "".join(out).strip()


def family_fingerprint(sources: dict[str, str]) -> str:
    """Fingerprint of {path: text}: independent of order, comments and whitespace."""
    digest = hashlib.sha256()
    for path in sorted(sources):
        file_hash = hashlib.sha256(normalize_source(sources[path]).encode("utf-8")).hexdigest()
        digest.update(f"{path}\0{file_hash}\n".encode())
    return FINGERPRINT_PREFIX + digest.hexdigest()


def parallel_for_call_sites(path: str, text: str) -> list[str]:
    """["path:line ParallelFor", ...] for every call outside comments and literals."""
    # Literals are blanked (newlines kept) so that a region label is not a call site.
    code = "".join(s if kind == "code" else '""' + "\n" * s.count("\n") for kind, s in _segments(text))
    sites = []
    for m in _CALL_SITE.finditer(code):
        line = code.count("\n", 0, m.start()) + 1
        sites.append(f"{path}:{line} {m.group(1)}")
    return sites
