"""HTML turned into readable text."""

from __future__ import annotations

from agent_smith.toolkits.html_text import html_to_text


def test_markup_scripts_and_styles_go_and_blocks_become_lines() -> None:
    html = (
        "<html><head><title> A  title </title><style>b{}</style></head><body>"
        "<nav>Home</nav><h2>Part</h2><p>Some <a href='/x'>linked</a>\n text.</p>"
        "<script>var x = '<p>no</p>';</script><ol><li>first</li><li>second</li></ol>"
        "<table><tr><td>a</td><td>b</td></tr></table>one<br>two</body></html>"
    )
    assert html_to_text(html) == (
        "A title\n\nHome\n## Part\nSome linked text.\n- first\n- second\nab\none\ntwo"
    )


def test_pre_keeps_its_lines_and_entities_are_decoded() -> None:
    assert html_to_text("<pre>a  b\n  c</pre><p>&lt;tag&gt; &amp; &eacute;</p>") == (
        "a  b\n  c\n<tag> & é"
    )


def test_broken_markup_never_raises() -> None:
    assert html_to_text("<p>unclosed <b>bold <i>both") == "unclosed bold both"
    assert html_to_text("<<<>>></p></div>") == "<<<>>>"
