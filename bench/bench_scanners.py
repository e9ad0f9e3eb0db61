"""Benchmark the scanners on ~10 MB of JavaScript, Python, Ruby and HTML (plain script, no pytest).

Run: python -S -E bench/bench_scanners.py
Targets: check_balance <= 2x one re.finditer pass over the bracket/quote characters (issue 14; a balanced
file takes the quick check, docs/behaviour.md#balance-speed);
function_range and tag_range on a 10 MB file <= check_balance on it.
"""

import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench import SNIPPET  # noqa: E402  (the Python of bench_check.py)
from better_edit import check_balance, function_range, tag_range  # noqa: E402

JS_SNIPPETS = [
    """function render{n}(items, opts = {{}}) {{
  // build the list (with a comment containing ( and {{
  const title = `Items: ${{items.length}} of ${{opts.total ?? "?"}}`;
  return items.map((item, i) => `<li class="${{i % 2 ? 'odd' : 'even'}}">${{item.name}}</li>`).join("");
}}
""",
    """export class Store{n} extends Base {{
  constructor(state) {{
    super(state);
    this.re = /[a-z]+\\/(\\d{{2,}})\\]/gi;   /* regex with brackets ( [ {{ */
    this.ratio = state.a / state.b / 2;
  }}
  get size() {{ return Object.keys(this.state).length; }}
}}
""",
    """const config{n} = {{
  name: 'it\\'s a "string" with ) and ]',
  list: [1, 2, [3, 4], {{ a: [5] }}],
  check(x) {{ if (x > 0 && x < 10) {{ return x.toString().replace(/"/g, "'"); }} return null; }},
}};
""",
    """async function load{n}(url) {{
  try {{
    const res = await fetch(`${{url}}?q=${{encodeURIComponent("a(b")}}`);
    if (!res.ok) throw new Error('bad ' + res.status);
    return (await res.json()).data ?? [];
  }} catch (e) {{
    console.error("failed: {{", e);
  }}
}}
""",
]

HTML_SNIPPETS = [
    """<div class="card" data-n="{n}">
  <h2 title="a > b">Card {n}</h2>
  <p>Some <em>text</em> with <a href="/x?a=1&b=2">a link</a>.<br>
  <ul>
    <li>one
    <li>two</li>
  </ul>
  <!-- a comment with <div> inside -->
  <img src="x.png" alt="pic"/>
</div>
""",
    """<section id="s{n}">
  <table>
    <tr><td>1</td><td>2</td></tr>
    <tr><td>3</td><td>4</td></tr>
  </table>
  <script>
    if (window.x) {{ console.log("<div>"); }}
  </script>
  <input type="text" value='<x>'>
</section>
""",
]


RUBY_SNIPPET = """# A store of things.
module Shop{n}
  class Cart
    attr_reader :items

    def initialize(items = [])
      @items = items.map {{ |i| i.dup }}
      @note = <<~TEXT
        Cart with #{{items.size}} items (see [docs])
      TEXT
    end

    def total(tax: 0.2)
      sum = items.sum {{ |i| i[:price] * (1 + tax) }}
      format("%.2f", sum) # rounded {{to cents}}
    end
  end
end

"""


def build(snippets, size, head="", tail=""):
    parts, total, n = [head], len(head), 0
    while total < size:
        piece = snippets[n % len(snippets)].format(n=n)
        parts.append(piece)
        total += len(piece)
        n += 1
    parts.append(tail)
    return "".join(parts)


def best_of(function, repeat=3):
    best = None
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        elapsed = time.perf_counter() - started
        best = elapsed if best is None else min(best, elapsed)
    return best


def main():
    size = 10 * 1024 * 1024
    js = build(JS_SNIPPETS, size)
    html = build(HTML_SNIPPETS, size, "<!DOCTYPE html>\n<html>\n<body>\n", "</body>\n</html>\n")
    floor_pattern = re.compile(r"""[()\[\]{}"'`]""")

    def floor():
        for _ in floor_pattern.finditer(js):
            pass

    result = check_balance(js, "javascript")
    assert result["status"] == "balanced", result["unmatched"][:5]
    js_lines = js.count("\n")
    middle = js_lines // 2
    t_floor = best_of(floor)
    t_balance = best_of(lambda: check_balance(js, "javascript"))
    broken = "(\n" + js  # one unclosed bracket: the quick check gives up, the exact scan answers
    assert check_balance(broken, "javascript")["status"] == "unbalanced"
    t_broken = best_of(lambda: check_balance(broken, "javascript"))
    t_func = best_of(lambda: function_range(js, "javascript", middle))
    t_func_end = best_of(lambda: function_range(js, "javascript", js_lines - 3))
    py = "".join(SNIPPET.format(n=n) for n in range(size // len(SNIPPET) + 1))[:size]
    py = py[: py.rfind("\n\n") + 1]
    py_lines = py.count("\n")
    t_py_balance = best_of(lambda: check_balance(py, "python"))
    t_py_func = best_of(lambda: function_range(py, "python", py_lines // 2))
    t_py_func_end = best_of(lambda: function_range(py, "python", py_lines - 3))
    rb = build([RUBY_SNIPPET], size)
    rb_lines = rb.count("\n")
    rb_middle = rb_lines // 2 // 19 * 19  # (the line before a snippet of 19 lines)
    assert function_range(rb, "ruby", rb_middle + 7)["name"] == "initialize"
    assert function_range(rb, "ruby", rb_lines - 5)["name"] == "total"
    assert function_range(rb, "ruby", rb_middle + 19) is None  # (a blank line between modules)
    t_rb_balance = best_of(lambda: check_balance(rb, "ruby"))
    t_rb_func = best_of(lambda: function_range(rb, "ruby", rb_middle + 7))
    t_rb_func_end = best_of(lambda: function_range(rb, "ruby", rb_lines - 5))
    t_rb_outside = best_of(lambda: function_range(rb, "ruby", rb_middle + 19))
    html_result = check_balance(html, "html")
    assert html_result["status"] == "balanced", html_result["unmatched"][:5]
    html_middle = html.count("\n") // 2
    t_html_balance = best_of(lambda: check_balance(html, "html"))
    t_tag = best_of(lambda: tag_range(html, "html", html_middle))
    t_tag_end = best_of(lambda: tag_range(html, "html", html.count("\n") - 3))

    print(f"javascript: {len(js) / 1e6:.1f} MB, {js_lines} lines; html: {len(html) / 1e6:.1f} MB")
    print(f"finditer floor            {t_floor:8.3f} s")
    print(
        f"check_balance (js)        {t_balance:8.3f} s   ratio to floor {t_balance / t_floor:5.2f} (target <= 2)"
    )
    print(
        f"check_balance (js, one unclosed bracket) {t_broken:8.3f} s   ratio to floor {t_broken / t_floor:5.2f}"
    )
    print(
        f"function_range middle     {t_func:8.3f} s   ratio to balance {t_func / t_balance:5.2f} (target <= 1)"
    )
    print(
        f"function_range near end   {t_func_end:8.3f} s   ratio to balance {t_func_end / t_balance:5.2f} (target <= 1)"
    )
    print(f"check_balance (python)    {t_py_balance:8.3f} s")
    for where, took in (("middle", t_py_func), ("near end", t_py_func_end)):
        print(
            f"function_range (python) {where:9}{took:7.3f} s   ratio to balance {took / t_py_balance:5.2f} (target <= 1)"
        )
    print(f"check_balance (ruby)      {t_rb_balance:8.3f} s")
    for where, took in (("middle", t_rb_func), ("near end", t_rb_func_end), ("outside", t_rb_outside)):
        print(
            f"function_range (ruby) {where:11}{took:7.3f} s   ratio to balance {took / t_rb_balance:5.2f} (target <= 1)"
        )
    print(f"check_balance (html)      {t_html_balance:8.3f} s")
    print(
        f"tag_range middle          {t_tag:8.3f} s   ratio to balance {t_tag / t_html_balance:5.2f} (target <= 1)"
    )
    print(
        f"tag_range near end        {t_tag_end:8.3f} s   ratio to balance {t_tag_end / t_html_balance:5.2f} (target <= 1)"
    )
    print("function_range middle ->", function_range(js, "javascript", middle))
    print("tag_range middle ->", tag_range(html, "html", html_middle))


if __name__ == "__main__":
    main()
