"""Writing systems: which script a name is in, and its Latin form.

Sources disagree on the script of one work's authors: Crossref may list a Korean
paper's authors as "Park, Eun-ji", OpenAlex as "박은지", a citation as either.
Transliteration is done by anyascii (ISC licence, one table per Unicode block,
no dependencies); it romanises Cyrillic and Greek by the common schemes, Chinese
by pinyin without tones, kana by Hepburn and Hangul by syllable. Its readings are
the likeliest ones, not a name's own: a Korean family name has customary
spellings ("Park" for 박, which it reads "bak"), a Japanese name written in kanji
its own readings. `transliteration_decides` says where a failed match therefore
proves nothing.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Literal

from anyascii import anyascii

Script = Literal["latin", "han", "kana", "hangul", "other"]

_HANGUL = re.compile(r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]")
_KANA = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
#: CJK ideographs (extension A, the unified block, compatibility ideographs). Tested by
#: code point: the same character class costs the regex compiler 14 ms on every start.
_HAN = (("\u3400", "\u4dbf"), ("\u4e00", "\u9fff"), ("\uf900", "\ufaff"))
_LETTER = re.compile(r"[^\W\d_]")
_NOT_LATIN_LETTER = re.compile(r"[^a-z]")

#: Scripts that write a person's name without a space between family and given name.
UNSPACED_SCRIPTS = frozenset({"han", "kana", "hangul"})
#: Longest name written as one word in those scripts (Korean and Chinese names have
#: two to four syllables); a longer braced word is an organisation ("中国科学院").
LONGEST_UNSPACED_NAME = 4


@functools.lru_cache(maxsize=8192)
def script_of(text: str) -> Script:
    """The script of a name or title: the first non-Latin script in it, else Latin."""
    if text.isascii():  # most names and titles: no letter to look up
        return "latin"
    if _HANGUL.search(text):
        return "hangul"
    if _KANA.search(text):
        return "kana"
    if any(low <= char <= high for char in text for low, high in _HAN):
        return "han"
    for char in text:
        if _LETTER.match(char) and not unicodedata.name(char, "").startswith("LATIN"):
            return "other"
    return "latin"


@functools.lru_cache(maxsize=8192)
def latin_key(text: str) -> str:
    """Lower-case Latin letters of `text` romanised: "Григорьева" → "grigoreva"."""
    if text.isascii():
        return _NOT_LATIN_LETTER.sub("", text.lower())
    return _NOT_LATIN_LETTER.sub("", anyascii(unicodedata.normalize("NFC", text)).lower())


#: Romanisations of Korean differ in vowels ("Jae-young", "Jaeyeong", "Jae-yŏng") and in
#: voicing (k/g, t/d, p/b, ch/j, l/r, sh/s): a name's skeleton keeps one consonant of each.
_VOWELS = re.compile(r"[aeiouwy]+")
_CONSONANT_CLASSES = (("ch", "j"), ("sh", "s"), ("k", "g"), ("t", "d"), ("p", "b"), ("l", "r"))


@functools.lru_cache(maxsize=8192)
def consonant_skeleton(latin: str) -> str:
    """The consonants of a romanised Korean name, voicing folded: "jaeyoung" → "jng"."""
    for written, folded in _CONSONANT_CLASSES:
        latin = latin.replace(written, folded)
    return _VOWELS.sub("", latin)


def is_unspaced_name(text: str) -> bool:
    """One word of Chinese, Japanese or Korean that can be a whole person's name."""
    word = text.strip()
    return (
        script_of(word) in UNSPACED_SCRIPTS
        and " " not in word
        and 1 < len(unicodedata.normalize("NFC", word)) <= LONGEST_UNSPACED_NAME
    )


def transliteration_decides(script: Script) -> bool:
    """Whether a romanised name that differs from the transliteration is another person.

    Cyrillic and Greek are romanised letter by letter, so a name that differs beyond
    the schemes' variants is someone else. Hangul family names have customary
    spellings and kanji are read as Chinese: there, a difference proves nothing.
    """
    return script == "other"
