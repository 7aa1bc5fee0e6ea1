"""How ``mtsbench-cjk-sc.otf`` was made (run by hand, not at install or run time).

``python make_subset.py NotoSansCJKsc-Regular.otf mtsbench-cjk-sc.otf`` cuts Noto Sans CJK
SC Regular (1.004, SIL Open Font License 1.1: OFL.txt here) to the characters of GB2312
(the 6,763 hanzi of simplified Chinese in everyday use, and its symbols), CJK punctuation
(U+3000-303F) and full-width forms (U+FF00-FFEF): 7,631 characters, 1.6 MB instead of
16 MB. Latin text is drawn by matplotlib's own DejaVu Sans, so no Latin glyph is kept; no
layout feature either (matplotlib does not shape text). The family is renamed
``mtsbench CJK SC`` (a Modified Version under the OFL; neither 'Source' nor 'Noto' in its
name), so it never stands in for a full Noto Sans CJK SC a user has installed. Needs
fontTools (matplotlib's own dependency).
"""

import sys

from fontTools import subset


def gb2312() -> set[str]:
    """The non-ASCII characters of GB2312 (decoded from every two-byte code)."""
    chars = set()
    for hi in range(0xA1, 0xF8):
        for lo in range(0xA1, 0xFF):
            try:
                chars.add(bytes([hi, lo]).decode("gb2312"))
            except UnicodeDecodeError:
                pass
    return {c for c in chars if ord(c) > 0x7F}


def main(src: str, dst: str) -> None:
    chars = gb2312() | {chr(c) for c in range(0x3000, 0x3040)} | {chr(c) for c in range(0xFF00, 0xFFF0)}
    options = subset.Options()
    options.layout_features = []          # matplotlib does no shaping: the glyphs alone
    options.name_IDs = ["*"]
    options.notdef_outline = True
    options.hinting = False
    font = subset.load_font(src, options)
    cut = subset.Subsetter(options)
    cut.populate(unicodes=[ord(c) for c in chars])
    cut.subset(font)
    family = "mtsbench CJK SC"
    names = {1: family, 16: family, 4: f"{family} Regular", 6: "mtsbenchCJKSC-Regular",
             3: "1.004;mtsbench subset of NotoSansCJKsc-Regular"}
    for record in font["name"].names:
        if record.nameID in names:
            record.string = names[record.nameID]
    font["name"].setName(f"{family}: Noto Sans CJK SC Regular 1.004 cut to the characters of GB2312 (6,763 hanzi), "
                         "CJK punctuation and full-width forms, for mtsbench's figures", 10, 3, 1, 0x409)
    subset.save_font(font, dst, options)
    print(f"{dst}: {len(chars)} characters")


if __name__ == "__main__":
    main(*sys.argv[1:3])
