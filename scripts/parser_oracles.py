"""Compare `func-range` and `tag-range` with real parsers over the code on this machine.

    python scripts/parser_oracles.py LANGUAGE [--root DIR ...] [--limit N] [--show N]

LANGUAGE is one of python, javascript, typescript, go, ruby, perl, c, java, cpp, csharp, kotlin, rust,
swift, html, xml. For each file the parser reads, a few definitions (elements) are picked at random
(seeded), a line of their body is asked about, and the answer must be the innermost definition
around that line as the parser sees it. Our ranges may start earlier (a doc comment above) and, in Python, end later (comment lines
indented into the body). Prints the count of checks, of answers that differ, and the first of them.

What each language needs (a missing one is said, not installed): python and html/xml nothing
more (ast, html.parser, expat); javascript and typescript node and npm (acorn and typescript 5 are
installed once into bench/_work/oracles); go a Go toolchain; ruby Ruby (RubyVM::AbstractSyntaxTree);
perl PPI (Debian: libppi-perl); c universal-ctags; java, cpp, csharp, kotlin, rust and swift a
tree-sitter grammar (the `tree-sitter` wheel and the language's, from PyPI, installed once into
bench/_work/oracles/py; one that does not install is said and skipped). Those six have no code on a
usual machine: their default root is bench/_work/corpora/LANGUAGE, to fill with a few projects'
sources (git clone or git archive, e.g. apache/commons-lang, fmtlib/fmt, JamesNK/Newtonsoft.Json,
square/okio, BurntSushi/ripgrep, apple/swift-argument-parser), or name others with --root; a C++
root's .h files are read as C++. docs/behaviour.md quotes the figures this gave.
"""

import argparse
import bisect
import collections
import glob
import importlib
import json
import os
import random
import shutil
import subprocess
import sys
from html.parser import HTMLParser

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
import better_edit as be  # noqa: E402

WORK = os.path.join(REPO, "bench", "_work", "oracles")
CORPORA = os.path.join(REPO, "bench", "_work", "corpora")
ROOTS = {
    "python": [os.path.dirname(os.__file__)],
    "javascript": ["/usr/lib/node_modules", os.path.join(REPO, "tests", "ts_client", "node_modules")],
    "typescript": [
        os.path.join(REPO, "tests", "ts_client", "node_modules"),
        os.path.expanduser("~/.npm/_npx"),
    ],
    "go": sorted(glob.glob("/usr/lib/go*/src")),
    "ruby": ["/usr/lib/ruby"],
    "perl": sorted(glob.glob("/usr/share/perl*")),
    "c": ["/usr/share/doc", "/usr/include", "/usr/share"],
    **{name: [os.path.join(CORPORA, name)] for name in "java cpp csharp kotlin rust swift".split()},
    "html": ["/usr/share/doc"],
    "xml": ["/usr/share"],
}
SUFFIXES = {
    "python": (".py",), "javascript": (".js", ".mjs", ".cjs"), "typescript": (".ts",), "go": (".go",),
    "ruby": (".rb",), "perl": (".pm",), "c": (".c",), "html": (".html", ".htm"), "xml": (".xml", ".svg"),
    "java": (".java",), "cpp": (".cpp", ".cc", ".cxx", ".hpp", ".hh", ".h"), "csharp": (".cs",),
    "kotlin": (".kt", ".kts"), "rust": (".rs",), "swift": (".swift",),
}  # fmt: skip

# node: [start, end, first body line, last body line, name] of functions whose body holds no other
JS_ORACLE = r"""
const fs = require('fs');
const typescript = process.argv[2] === 'typescript';
const parser = require(typescript ? 'typescript' : 'acorn');
const out = {};
for (const path of JSON.parse(fs.readFileSync(0, 'utf8'))) {
  let src; try { src = fs.readFileSync(path, 'utf8'); } catch { continue; }
  const found = [];
  if (typescript) {
    const ts = parser, sf = ts.createSourceFile(path, src, ts.ScriptTarget.Latest, true);
    if (sf.parseDiagnostics && sf.parseDiagnostics.length) continue;
    const line = pos => sf.getLineAndCharacterOfPosition(pos).line + 1;
    const visit = n => {
      if ((ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n)) && n.body && n.body.statements.length) {
        let nested = false;
        const scan = m => { if (nested) return; if (m !== n && (ts.isFunctionLike(m) || ts.isClassLike(m))) { nested = true; return; } ts.forEachChild(m, scan); };
        scan(n.body);
        const st = n.body.statements;
        if (!nested) found.push([line(n.getStart(sf)), line(n.end), line(st[0].getStart(sf)), line(st[st.length - 1].end), n.name ? n.name.getText(sf) : null]);
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  } else {
    let ast = null;
    for (const sourceType of ['module', 'script']) {
      try { ast = parser.parse(src, {ecmaVersion: 'latest', sourceType, locations: true, allowHashBang: true}); break; } catch {}
    }
    if (!ast) continue;
    const holdsFunction = body => { let nested = false; const scan = m => { if (nested || !m || typeof m !== 'object') return; if (typeof m.type === 'string' && /Function|Class/.test(m.type)) { nested = true; return; } for (const k in m) if (k !== 'loc') { const v = m[k]; if (Array.isArray(v)) v.forEach(scan); else if (v && typeof v === 'object') scan(v); } }; for (const s of body.body) scan(s); return nested; };
    const walk = n => {
      if (!n || typeof n.type !== 'string') return;
      const fn = n.type === 'MethodDefinition' ? n.value : n.type === 'FunctionDeclaration' ? n : null;
      if (fn && fn.body.body && fn.body.body.length && !holdsFunction(fn.body)) {
        const b = fn.body.body;
        found.push([n.loc.start.line, n.loc.end.line, b[0].loc.start.line, b[b.length - 1].loc.end.line, null]);
      }
      for (const k in n) if (k !== 'loc') { const v = n[k]; if (Array.isArray(v)) v.forEach(walk); else if (v && typeof v === 'object') walk(v); }
    };
    walk(ast);
  }
  out[path] = found;
}
process.stdout.write(JSON.stringify(out));
"""
GO_ORACLE = r"""package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, in.Text(), nil, parser.ParseComments)
		if err != nil {
			continue
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil || len(fd.Body.List) == 0 {
				continue
			}
			nested := false
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch n.(type) {
				case *ast.FuncLit, *ast.TypeSpec:
					nested = true
				}
				return !nested
			})
			if nested {
				continue
			}
			start := fset.Position(fd.Pos()).Line
			if fd.Doc != nil {
				start = fset.Position(fd.Doc.Pos()).Line
			}
			b := fd.Body.List
			row, _ := json.Marshal([]interface{}{in.Text(), start, fset.Position(fd.End()).Line,
				fset.Position(b[0].Pos()).Line, fset.Position(b[len(b)-1].End()).Line, fd.Name.Name})
			fmt.Println(string(row))
		}
	}
}
"""
RUBY_ORACLE = r"""
require 'json'
def walk(node, &blk)
  return unless node.is_a?(RubyVM::AbstractSyntaxTree::Node)
  yield node
  node.children.each { |c| walk(c, &blk) }
end
STDIN.each_line do |path|
  path = path.chomp
  src = File.read(path) rescue next
  next unless src.valid_encoding?
  tree = RubyVM::AbstractSyntaxTree.parse(src) rescue next
  walk(tree) do |n|
    next unless [:DEFN, :DEFS].include?(n.type)
    nested = false
    n.children.each { |c| walk(c) { |m| nested = true if [:DEFN, :DEFS, :CLASS, :MODULE, :ITER, :LAMBDA, :SCLASS].include?(m.type) } }
    next if nested || n.last_lineno - n.first_lineno < 2
    puts JSON.generate([path, n.first_lineno, n.last_lineno, n.first_lineno + 1, n.last_lineno - 1, (n.type == :DEFN ? n.children[0] : n.children[1]).to_s])
  end
end
"""
PERL_ORACLE = r"""
use strict; use warnings; use PPI; use JSON::PP;
while (my $path = <STDIN>) {
  chomp $path;
  my $doc = eval { PPI::Document->new($path) } or next;
  $doc->index_locations;
  for my $s (@{ $doc->find('PPI::Statement::Sub') || [] }) {
    my $block = $s->block or next;
    next if $block->find_first(sub { $_[1]->isa('PPI::Token::Word') && $_[1]->content eq 'sub' });
    my @kids = $block->schildren or next;
    print encode_json([$path, $s->location->[0], $s->last_token->location->[0], $kids[0]->location->[0],
                       $kids[-1]->last_token->location->[0], $s->name // '']), "\n";
  }
}
"""

# tree-sitter: the grammar's wheel, the nodes that are definitions (those func-range answers: named
# functions, methods, constructors, classes and their kin), and the nodes that only keep the
# definition around them from being a leaf (closures, anonymous classes: func-range answers none)
TREE_SITTER = {
    "java": ("tree-sitter-java", "method_declaration constructor_declaration compact_constructor_declaration"
             " class_declaration interface_declaration enum_declaration record_declaration"
             " annotation_type_declaration", "lambda_expression class_body"),
    "cpp": ("tree-sitter-cpp", "function_definition class_specifier struct_specifier union_specifier"
            " enum_specifier", "lambda_expression"),
    "csharp": ("tree-sitter-c-sharp", "method_declaration constructor_declaration destructor_declaration"
               " operator_declaration conversion_operator_declaration local_function_statement"
               " class_declaration struct_declaration interface_declaration enum_declaration"
               " record_declaration", "lambda_expression anonymous_method_expression"),
    "kotlin": ("tree-sitter-kotlin", "function_declaration secondary_constructor class_declaration"
               " object_declaration companion_object", "lambda_literal anonymous_function object_literal"),
    "rust": ("tree-sitter-rust", "function_item impl_item trait_item struct_item enum_item union_item",
             "closure_expression"),
    "swift": ("tree-sitter-swift", "function_declaration init_declaration deinit_declaration"
              " subscript_declaration class_declaration protocol_declaration", "lambda_literal"),
}  # fmt: skip


def files_of(language, roots, limit):
    paths = []
    for root in roots:
        for folder, _, names in os.walk(root):
            paths += [os.path.join(folder, n) for n in names if n.endswith(SUFFIXES[language])]
    paths = sorted(p for p in set(paths) if "/testdata/" not in p and os.path.getsize(p) < 1 << 20)
    random.Random(1).shuffle(paths)
    return paths[:limit]


def read(path):
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError):
        return None
    return None if "\r" in text or "\f" in text else text


def python_rows(paths):
    """[start (decorators included), end, first body line, last body line, name] of every def."""
    import ast

    rows = {}
    for path in paths:
        try:
            tree = ast.parse(read(path) or "")
        except (SyntaxError, ValueError):
            continue
        kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        rows[path] = [
            [min([n.lineno] + [d.lineno for d in n.decorator_list]), n.end_lineno, n.body[0].lineno,
             n.body[-1].end_lineno, n.name]
            for n in ast.walk(tree) if isinstance(n, kinds)
        ]  # fmt: skip
    return rows


def tool_rows(command, paths, stdin_lines=True):
    """Rows a helper program prints as JSON lines ([path, ...]), by file."""
    text = "\n".join(paths) if stdin_lines else json.dumps(paths)
    done = subprocess.run(command, input=text, capture_output=True, text=True)
    rows = collections.defaultdict(list)
    if not stdin_lines:
        return {path: found for path, found in json.loads(done.stdout or "{}").items()}
    for line in done.stdout.splitlines():
        row = json.loads(line)
        rows[row[0]].append(row[1:])
    return rows


def node_rows(language, paths):
    if not shutil.which("node") or not shutil.which("npm"):
        sys.exit("node and npm are needed")
    package = "typescript@5" if language == "typescript" else "acorn"
    if not os.path.isdir(os.path.join(WORK, "node_modules", package.split("@")[0])):
        os.makedirs(WORK, exist_ok=True)
        subprocess.run(
            ["npm", "install", "--prefix", WORK, "--no-save", package], check=True, capture_output=True
        )
    script = os.path.join(WORK, "oracle.cjs")
    with open(script, "w", encoding="utf-8") as handle:
        handle.write(JS_ORACLE)
    return tool_rows(["node", script, language], paths, stdin_lines=False)


def program_rows(language, paths):
    """Rows from the Go, Ruby or Perl helper program."""
    os.makedirs(WORK, exist_ok=True)
    if language == "go":
        if not shutil.which("go"):
            sys.exit("a Go toolchain is needed")
        folder = os.path.join(WORK, "go")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "main.go"), "w", encoding="utf-8") as handle:
            handle.write(GO_ORACLE)
        if not os.path.exists(os.path.join(folder, "go.mod")):
            subprocess.run(["go", "mod", "init", "oracle"], cwd=folder, check=True, capture_output=True)
        subprocess.run(["go", "build", "-o", "oracle", "."], cwd=folder, check=True)
        return tool_rows([os.path.join(folder, "oracle")], paths)
    interpreter, source = ("ruby", RUBY_ORACLE) if language == "ruby" else ("perl", PERL_ORACLE)
    if not shutil.which(interpreter):
        sys.exit(f"{interpreter} is needed")
    script = os.path.join(WORK, "oracle." + ("rb" if language == "ruby" else "pl"))
    with open(script, "w", encoding="utf-8") as handle:
        handle.write(source)
    return tool_rows([interpreter, script], paths)


def ctags_rows(paths):
    if not shutil.which("ctags"):
        sys.exit("universal-ctags is needed")
    rows = {}
    for path in paths:
        out = subprocess.run(
            ["ctags", "--output-format=json", "--fields=+ne", "--kinds-C=f", "-f", "-", path],
            capture_output=True, text=True,
        ).stdout  # fmt: skip
        tags = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        rows[path] = [
            [t["line"], t["end"], t["line"] + 2, t["end"] - 1, t["name"]] for t in tags if "end" in t
        ]
    return rows


def tree_sitter_rows(language, paths):
    """[start, end, first body line, last body line, name] of the definitions with a `{` body that
    holds no other definition nor closure, in files tree-sitter reads without an error."""
    wheel, definitions, closures = TREE_SITTER[language]
    folder = os.path.join(WORK, "py")
    sys.path.insert(0, folder)
    try:
        import tree_sitter

        grammar = importlib.import_module(wheel.replace("-", "_"))
    except ImportError:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--target", folder, "tree-sitter>=0.22", wheel],
            capture_output=True, text=True,
        )  # fmt: skip
        importlib.invalidate_caches()
        try:
            import tree_sitter

            grammar = importlib.import_module(wheel.replace("-", "_"))
        except ImportError:
            said = done.stderr.strip().splitlines() or [""]
            sys.exit(f"{wheel} is needed and did not install: {said[-1]}")
    grammar = tree_sitter.Language(grammar.language())
    parser = tree_sitter.Parser(grammar)
    pattern = " ".join(f"({kind})" for kind in (definitions + " " + closures).split())
    query = tree_sitter.Query(grammar, f"[{pattern}] @node")
    definitions = set(definitions.split())
    rows = {}
    for path in paths:
        text = read(path)
        data = text.encode() if text is not None else b""
        tree = parser.parse(data) if text is not None else None
        if tree is None or tree.root_node.has_error:
            continue
        found, marks = [], []
        nodes = tree_sitter.QueryCursor(query).captures(tree.root_node).get("node", [])
        for node in sorted(nodes, key=lambda n: (n.start_byte, -n.end_byte)):  # (in no set order)
            body = _ts_body(data, node) if node.type in definitions else node
            if body is None:
                continue  # (a declaration, an expression body, `= default`)
            marks.append(node.start_byte)
            if node.type in definitions:
                found.append((node, body))
        rows[path] = []
        for node, body in found:
            at = bisect.bisect_right(marks, body.start_byte)
            members = [n for n in body.named_children if "comment" not in n.type]
            if len(members) == 1 and members[0].type == "statements":  # (Swift)
                members = [n for n in members[0].named_children if "comment" not in n.type]
            if not members or (at < len(marks) and marks[at] < body.end_byte):
                continue
            name = node.child_by_field_name("name")
            if name is None and node.type.endswith("_specifier"):
                continue  # (C++: `struct {`, `enum {` are types of a variable, no definitions)
            rows[path].append([
                _ts_first(node), _ts_last(node), members[0].start_point.row + 1,
                _ts_last(members[-1]), name.text.decode() if name is not None else None,
            ])  # fmt: skip
    return rows


def _ts_body(data, node):
    """The `{...}` body of a definition node, or None."""
    bodies = ("function_body", "block", "class_body", "enum_class_body", "computed_property")
    body = node.child_by_field_name("body")
    if body is None:
        body = next((c for c in reversed(node.named_children) if c.type in bodies), None)
    if body is not None and body.type == "function_body":  # (Kotlin: its block, or `= expression`)
        body = next((c for c in body.named_children if c.type == "block"), body)
    arrow = next((c for c in node.named_children if c.type == "arrow_expression_clause"), None)
    if arrow is not None:
        return arrow  # (C#: `=> expression;`, a member without a block, which func-range answers too)
    return body if body is not None and data[body.start_byte : body.start_byte + 1] == b"{" else None


def _ts_first(node):
    """The line a definition starts on (1-based), with its C++ `template <...>` and Rust `#[...]`."""
    while node.parent is not None and node.parent.type == "template_declaration":
        node = node.parent
    first, before = node, node.prev_named_sibling
    while before is not None and before.type in ("attribute_item", "line_comment", "block_comment"):
        first = before if before.type == "attribute_item" else first
        before = before.prev_named_sibling
    return first.start_point.row + 1


def _ts_last(node):
    """The line a node ends on (1-based)."""
    return node.end_point.row + (1 if node.end_point.column else 0)


def check_definitions(language, rows, per_file, show):
    """Asks func-range about a body line of up to `per_file` definitions of each file."""
    rng, checked, wrong = random.Random(2), 0, []
    for path, found in sorted(rows.items()):
        text = read(path)
        if text is None:
            continue
        lines = text.split("\n")
        spans = [(row[0], row[1]) for row in found]
        for start, end, first, last, _name in rng.sample(found, min(per_file, len(found))):
            if first <= start or last > end:
                continue  # (a body on the definition's own line)
            line = rng.choice([first, last])
            around = [s for s in spans if s[0] <= line <= s[1]]
            if not around:
                continue  # (a tag whose end is before its body)
            want = max(around, key=lambda s: (s[0], -s[1]))
            got = be.function_range(text, language, line)
            checked += 1
            if not _agrees(language, lines, want, got):
                wrong.append((path, line, want, got and (got["start"], got["end"], got.get("name"))))
    return checked, wrong


def _agrees(language, lines, want, got):
    """Whether our range `got` is the parser's `want`, give or take a doc comment above and (in
    Python) comment lines after."""
    if got is None or got["start"] > want[0]:
        return False
    above = [x.strip() for x in lines[got["start"] - 1 : want[0] - 1]]
    comment = ("#",) if language in ("python", "ruby", "perl") else ("/*", "*", "//", "@", "#")
    signature = language == "c" and all(not x.endswith((";", "}")) for x in above)  # (`static int` above)
    if any(x and not x.startswith(comment) for x in above) and "*/" not in "".join(above) and not signature:
        return False
    below = lines[want[1] : got["end"]] if got["end"] >= want[1] else None
    return below is not None and (
        got["end"] == want[1] or all(not x.strip() or x.strip()[0] == "#" for x in below)
    )


class _Elements(HTMLParser):
    """(start line, end line) of the elements of a well-formed HTML text (end: the line of `>`)."""

    VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.text, self.stack, self.found, self.bad = text, [], [], False
        self.offsets = [0]
        for line in text.split("\n")[:-1]:
            self.offsets.append(self.offsets[-1] + len(line) + 1)

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.stack.append((tag, self.getpos()[0]))

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1][0] != tag:
            self.bad = True
            return
        line, column = self.getpos()
        close = self.text.find(">", self.offsets[line - 1] + column)
        self.found.append((self.stack.pop()[1], self.text.count("\n", 0, close) + 1))


def xml_elements(text):
    import xml.parsers.expat

    data, found, stack = text.encode(), [], []
    parser = xml.parsers.expat.ParserCreate()
    parser.StartElementHandler = lambda name, attrs: stack.append(parser.CurrentLineNumber)
    parser.EndElementHandler = lambda name: _xml_end(text, data, parser, stack, found)
    try:
        parser.Parse(data, True)
    except xml.parsers.expat.ExpatError:
        return None
    return found


def _xml_end(text, data, parser, stack, found):
    start = stack.pop()
    at = len(data[: parser.CurrentByteIndex].decode())
    if text.startswith("</", at):
        found.append((start, text.count("\n", 0, text.find(">", at)) + 1))


def check_elements(language, paths, show):
    rng, checked, wrong = random.Random(2), 0, []
    for path in paths:
        text = read(path)
        if text is None:
            continue
        if language == "html":
            parser = _Elements(text)
            try:
                parser.feed(text)
                parser.close()
            except (AssertionError, ValueError):
                continue
            found = None if parser.bad or parser.stack else parser.found
        else:
            found = xml_elements(text)
        if not found:
            continue
        edges = collections.Counter(line for element in found for line in element)
        multi = [e for e in found if e[1] - e[0] >= 2]
        for start, end in rng.sample(multi, min(4, len(multi))):
            lines = [n for n in range(start + 1, end) if not edges[n]]
            if not lines:
                continue
            line = rng.choice(lines)
            want = max((e for e in multi if e[0] < line < e[1]), key=lambda e: e[0])
            got = be.tag_range(text, language, line)
            checked += 1
            if got is None or (got["start"], got["end"]) != want:
                wrong.append((path, line, want, got))
    return checked, wrong


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("language", choices=sorted(ROOTS))
    parser.add_argument("--root", action="append", help="where to look for files (repeatable)")
    parser.add_argument("--limit", type=int, default=3000, help="files at most (default 3000)")
    parser.add_argument("--show", type=int, default=20, help="differences to print (default 20)")
    args = parser.parse_args()
    language = args.language
    paths = files_of(language, args.root or ROOTS[language], args.limit)
    if language in ("html", "xml"):
        checked, wrong = check_elements(language, paths, args.show)
    else:
        if language == "python":
            rows = python_rows(paths)
        elif language in ("javascript", "typescript"):
            rows = node_rows(language, paths)
        elif language == "c":
            rows = ctags_rows(paths)
        elif language in TREE_SITTER:
            rows = tree_sitter_rows(language, paths)
        else:
            rows = program_rows(language, paths)
        checked, wrong = check_definitions(language, rows, 6, args.show)
    print(f"{language}: {len(paths)} files, {checked} checks, {len(wrong)} differ")
    for row in wrong[: args.show]:
        print("  ", *row)


if __name__ == "__main__":
    main()
